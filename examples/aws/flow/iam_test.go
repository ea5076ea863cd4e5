package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack/iamcheck"
	"github.com/lambdaworkflow/workflow/lambda/flowhandler"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// functionName stands for the flow function's name, whose versions hand
// runs to each other.
const functionName = "iam-flow"

// version is a version of the flow function, as Start builds it.
type version = func(context.Context, json.RawMessage) (any, error)

// invoke gives v a batch of queue messages.
func invoke(ctx context.Context, v version, ev events.SQSEvent) (events.SQSEventResponse, error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return events.SQSEventResponse{}, err
	}
	out, err := v(ctx, raw)
	resp, _ := out.(events.SQSEventResponse)
	return resp, err
}

// The flow function's grants in template.yaml are exactly what its code
// calls for, besides what its event source mapping polls the queue with:
// flowhandler.Handler as Start builds it, fed the queue's messages as the
// event source mapping does, runs workflows that do everything a workflow
// can (large payloads, a child run, a timer, a hook, a webhook's streamed
// reply, a run stream, retention when runs end), hands a run pinned to
// another version over to it through Lambda, takes early and stale
// wake-ups, and checks for stuck runs, re-queueing one whose message was
// lost, then failing it when its second message is lost too. The test's
// own client calls, and the customer's webhook calls, go through a World
// that records nothing.
func TestGrantsAreWhatTheFunctionCalls(t *testing.T) {
	stack := iamcheck.NewStack(t)
	// template.yaml's flow function, which the examples' stack lets call
	// the flight agent's model.
	tmpl := iamcheck.LoadTemplate(t, "examples/aws/template.yaml")
	if stack.SchedulerAsIn(t, tmpl, "FlowFunction") {
		t.Log("the template gives the flow function the scheduler: long sleeps make schedules")
	}
	stack.ModelAsIn(t, tmpl, "FlightModelId", flightModelID)
	stack.PayloadKeyAsIn(t, tmpl, "FlowFunction")
	if !stack.StreamEventsAsIn(t, tmpl, "FlowFunction") {
		t.Fatal("the template gives the flow function, which writes run streams, no Event API to announce their writes on")
	}
	names := stack.Names()
	names.Function = functionName
	rec := iamcheck.NewRecorder(names)
	cfg := stack.Recorded(rec)
	useFlightModel(cfg, flightModelID, "") // the emulator's Bedrock Runtime
	function := stack.World(t, cfg)
	rec.Watch(function)
	other := stack.World(t, stack.Config)
	// Runs sealed as the stack seals them: the customer's client makes
	// each run's data key, the function the keys of the children it
	// starts, and it unwraps a key once per process (flowhandler.Start
	// builds the codec so).
	sealing := workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(stack.Config))
	c := workflow.NewClient(other, sealing)
	iamCustomer = c
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// Lambda, for the hand-off: an asynchronous Invoke of a version runs
	// that version's handler on the payload.
	versions := map[string]version{}
	lambdaAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := versions[r.URL.Query().Get("Qualifier")]
		payload, err := io.ReadAll(r.Body)
		if !ok || !strings.Contains(r.URL.Path, "/functions/"+functionName+"/") || err != nil {
			http.Error(w, `{"message": "no such version"}`, http.StatusNotFound)
			return
		}
		if _, err := v(r.Context(), payload); err != nil {
			t.Errorf("the handed-over event: %v", err)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer lambdaAPI.Close()
	invoker := awslambda.NewFromConfig(cfg, func(o *awslambda.Options) { o.BaseEndpoint = &lambdaAPI.URL })
	handoff := flowhandler.LambdaHandoff{Client: invoker, Function: functionName}
	long, err := function.LongStepQueue() // as Start gives it WORKFLOW_LONG_STEP_QUEUE_URL
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2"} {
		worker := workflow.NewWorker(function, workflow.WorkerOptions{Registry: iamWorkflows, Deployment: v, StuckAfter: stuckAfter, LongStepQueue: long, Codec: aws.PayloadCodecFromEnv(cfg)})
		versions[v] = flowhandler.WithStuckCheck(worker, flowhandler.Handler(worker, function, handoff))
	}
	alias := &mapping{target: versions["1"]} // the version the event source mapping invokes
	polling, stopPolling := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		feed(polling, ctx, t, sqs.NewFromConfig(stack.Config), stack.Options.QueueURL, alias)
	}()

	t.Run("PinnedRunHandedOver", func(t *testing.T) {
		token := "iam-pinned:" + t.Name()
		run, err := workflow.Start(ctx, c, iamPinned, token)
		if err != nil {
			t.Fatal(err)
		}
		waitForHook(t, ctx, c, token) // version 1 runs it first
		// Once version 1's invocation has returned (the run waits on its
		// hook), the alias moves: the resume's wake-up goes to version 2,
		// which must hand it over. Moved earlier, version 1's live
		// invocation could take the resume itself.
		alias.point(versions["2"])
		if err := workflow.ResumeHook(ctx, c, token, "done"); err != nil {
			t.Fatal(err)
		}
		if got, err := run.Result(ctx); err != nil || got != "done" {
			t.Fatalf("the handed-over run: %q, %v", got, err)
		}
	})
	t.Run("Everything", func(t *testing.T) {
		run, err := workflow.Start(ctx, c, iamEverything, "iam-hook:"+t.Name())
		if err != nil {
			t.Fatal(err)
		}
		path := iamcheck.Attribute(t, ctx, run.Attributes, "url") // no base URL: the URL is the path
		rec := httptest.NewRecorder()
		webhook.NewHandler(c).ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "POST", path, strings.NewReader("hi")))
		if body, _ := io.ReadAll(rec.Body); rec.Code != http.StatusOK || string(body) != "small"+iamBig {
			t.Fatalf("the webhook's reply: %d, %d bytes", rec.Code, len(body))
		}
		if got, err := run.Result(ctx); err != nil || len(got) != len(iamBig) {
			t.Fatalf("the run's result: %d bytes, %v", len(got), err)
		}
	})
	t.Run("FlightAgent", func(t *testing.T) {
		// A turn of the flight agent's session: a model call on Bedrock
		// (the emulator's mock answers with text and no tool call).
		run, err := flight.Session.Start(ctx, c, chat.Turn{Messages: []agent.Message{agent.UserMessage("Find me a flight.")}})
		if err != nil {
			t.Fatal(err)
		}
		if err := flight.Session.Send(ctx, c, run.ID, chat.Message{End: true}); err != nil {
			t.Fatal(err)
		}
		if res, err := run.Result(ctx); err != nil || !strings.HasPrefix(res.Text, "[ministack mock") {
			t.Fatalf("the session's answer: %+v, %v; want the emulator's mock", res, err)
		}
	})
	t.Run("LongStepHandedOut", func(t *testing.T) {
		// The function hands the run to the long-step queue; a Worker
		// outside Lambda (not the function: its calls are not recorded)
		// of the run's deployment, with the stack's key, runs the step.
		run, err := workflow.Start(ctx, c, iamMarathon, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		outside, err := other.LongStepQueue()
		if err != nil {
			t.Fatal(err)
		}
		deployment := iamcheck.Attribute(t, ctx, run.Attributes, "$deployment")
		// Not the test's context: its deadline would give the Worker's
		// invocations a time limit, the one thing it must not have.
		serving, stop := context.WithCancel(context.WithoutCancel(ctx))
		defer stop()
		go func() {
			_ = workflow.NewWorker(other, workflow.WorkerOptions{Registry: iamWorkflows, Deployment: deployment, Queue: outside, Codec: aws.PayloadCodecFromEnv(stack.Config)}).Run(serving)
		}()
		if got, err := run.Result(ctx); err != nil || got != "outside" {
			t.Fatalf("the long step's run: %q, %v", got, err)
		}
	})
	t.Run("EarlyAndStaleWakeUps", func(t *testing.T) {
		run, err := workflow.Start(ctx, c, iamSleeper, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if evs, err := other.Events(ctx, run.ID, 0); err != nil {
				t.Fatal(err)
			} else if len(evs) > 0 && evs[len(evs)-1].Type == world.WaitCreated {
				break
			}
			pause(t, ctx, 50*time.Millisecond)
		}
		// A wake-up that arrives an hour early (a hop of the queue's) is
		// queued again; one for a run that does not exist is dropped.
		for _, msg := range []world.Message{{RunID: run.ID, DeliverAt: time.Now().Add(time.Hour)}, {RunID: "wrun_nonesuch"}} {
			body, err := json.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-" + msg.RunID, Body: string(body), EventSource: "aws:sqs"}}}
			if resp, err := invoke(ctx, versions["2"], ev); err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("the wake-up for %s: %+v, %v", msg.RunID, resp, err)
			}
		}
	})
	t.Run("StuckRuns", func(t *testing.T) {
		// A run whose message is lost, and then its re-queued message too
		// (the event source mapping takes them, and nothing runs).
		lost := func(context.Context, json.RawMessage) (any, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}, nil
		}
		alias.point(version(lost))
		run, err := workflow.Start(ctx, workflow.NewClient(lostMessages{other}, sealing), iamSleeper, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []func(workflow.StuckReport) []string{
			func(r workflow.StuckReport) []string { return r.Requeued },
			func(r workflow.StuckReport) []string { return r.Failed },
		} {
			for !slices.Contains(want(checkStuck(t, ctx, versions["2"])), run.ID) {
				pause(t, ctx, stuckAfter/4)
			}
		}
		if st, err := run.Status(ctx); err != nil || st != workflow.StatusFailed {
			t.Fatalf("the stuck run is %s, %v; want it failed", st, err)
		}
	})
	// A run's result is recorded before its invocation ends (retention's
	// calls come after): let the last batch finish.
	stopPolling()
	<-fed
	iamcheck.Check(t, tmpl, "FlowFunction", rec)
}

// feed is the event source mapping: until polling ends, it receives the
// queue's messages in batches, invokes the alias's version with them (in
// ctx), and deletes those the version did not report failed.
func feed(polling, ctx context.Context, t *testing.T, q *sqs.Client, url string, alias *mapping) {
	for polling.Err() == nil {
		out, err := q.ReceiveMessage(polling, &sqs.ReceiveMessageInput{
			QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp},
		})
		if err != nil || len(out.Messages) == 0 {
			continue
		}
		ev := events.SQSEvent{}
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle, Body: *m.Body, Attributes: m.Attributes, EventSource: "aws:sqs"})
		}
		resp, err := alias.invoke(ctx, ev)
		if err != nil {
			t.Logf("the flow function failed a batch: %v", err)
			continue
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, r := range ev.Records {
			if !failed[r.MessageId] {
				_, _ = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: &r.ReceiptHandle})
			}
		}
	}
}

// mapping is the event source mapping's alias: the version it invokes.
// Moving it waits for the batch in flight, as an alias moved between two
// invocations.
type mapping struct {
	mu     sync.Mutex
	target version
}

func (m *mapping) point(v version) {
	m.mu.Lock()
	m.target = v
	m.mu.Unlock()
}

func (m *mapping) invoke(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return invoke(ctx, m.target, ev)
}

// stuckAfter is the flow function's stuck-run threshold in the test, so
// that a run is overdue at once.
const stuckAfter = time.Second

// checkStuck invokes v as the stuck-run schedule does.
func checkStuck(t *testing.T, ctx context.Context, v version) workflow.StuckReport {
	t.Helper()
	out, err := v(ctx, json.RawMessage(flowhandler.CheckStuckEvent))
	if err != nil {
		t.Fatalf("the stuck-run check: %v", err)
	}
	return out.(workflow.StuckReport)
}

// lostMessages is a World whose messages are lost.
type lostMessages struct{ world.World }

func (lostMessages) Enqueue(context.Context, world.Message) error { return nil }

// StartRun stores the run without its first message.
func (l lostMessages) StartRun(ctx context.Context, run world.Run, first []world.Event, _ world.Message) (world.Run, error) {
	return l.CreateRun(ctx, run, first)
}

func waitForHook(t *testing.T, ctx context.Context, c *workflow.Client, token string) {
	t.Helper()
	for {
		if _, err := c.GetHook(ctx, token); err == nil {
			return
		}
		pause(t, ctx, 50*time.Millisecond)
	}
}

func pause(t *testing.T, ctx context.Context, d time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatal("the scenario did not finish in time")
	case <-time.After(d):
	}
}

// iamBig is over what an item holds inline, compressed too: it goes to S3.
var iamBig = iamcheck.Incompressible(400 << 10)

var iamWorkflows = workflow.NewRegistry(iamEverything, iamChild, iamPinned, iamSleeper, flight.Session.Workflow(), iamMarathon)

// flightModelID is the model the flight agent calls in the test: any ID
// does on the emulator.
const flightModelID = "amazon.nova-lite-v1:0"

// iamLongStep declares more than any invocation of the function allows.
var iamLongStep = workflow.DefineStep("iamflow.longStep", func(context.Context, struct{}) (string, error) {
	return "outside", nil
}, workflow.WithTimeout(24*time.Hour))

var iamMarathon = workflow.Define("iamflow.marathon", func(ctx workflow.Context, in struct{}) (string, error) {
	return iamLongStep.Call(ctx, in)
})

// iamCustomer is the client iamLarge resumes a hook through: not the
// function's.
var iamCustomer *workflow.Client

// iamEverything does what a workflow can, for the calls each thing costs.
var iamEverything = workflow.Define("iamflow.everything", func(ctx workflow.Context, token string) (string, error) {
	hook := workflow.CreateHook[string](ctx, workflow.WithToken(token))
	workflow.Sleep(ctx, time.Second) // a timer; the hook is the run's when it wakes
	out, err := iamLarge.Call(ctx, token)
	if err != nil {
		return "", err
	}
	if _, err := hook.Receive(ctx); err != nil {
		return "", err
	}
	if _, err := iamChild.StartChild(ctx, out).Get(ctx); err != nil {
		return "", err
	}
	wh := workflow.CreateWebhook(ctx, workflow.WithManualResponse())
	if err := workflow.SetAttributes(ctx, map[string]string{"url": wh.URL(ctx)}); err != nil {
		return "", err
	}
	msg, err := wh.Receive(ctx)
	if err != nil {
		return "", err
	}
	if _, err := iamReply.Call(ctx, msg); err != nil {
		return "", err
	}
	return out, nil
})

// iamLarge writes to the run's stream and returns a large output. It
// resumes the run's hook first: a message the run takes into its log while
// it holds the lease.
var iamLarge = workflow.DefineStep("iamflow.large", func(ctx context.Context, token string) (string, error) {
	if err := workflow.ResumeHook(ctx, iamCustomer, token, "resumed"); err != nil {
		return "", err
	}
	w, err := workflow.Writer[string](ctx, "")
	if err != nil {
		return "", err
	}
	if err := w.Write("progress"); err != nil {
		return "", err
	}
	return iamBig, w.Close()
})

// iamReply answers a webhook call with a small chunk and a large one.
var iamReply = workflow.DefineStep("iamflow.reply", func(ctx context.Context, msg workflow.WebhookMessage) (struct{}, error) {
	body := workflow.NewStream(func(yield func([]byte) bool) error {
		if yield([]byte("small")) {
			yield([]byte(iamBig))
		}
		return nil
	})
	return struct{}{}, msg.RespondWith(ctx, workflow.WebhookResponse{Status: http.StatusOK, Stream: body})
})

var iamChild = workflow.Define("iamflow.child", func(ctx workflow.Context, in string) (int, error) { return len(in), nil })

var iamPinned = workflow.Define("iamflow.pinned", func(ctx workflow.Context, token string) (string, error) {
	return workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
})

var iamSleeper = workflow.Define("iamflow.sleeper", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
	workflow.Sleep(ctx, time.Hour)
	return struct{}{}, nil
})
