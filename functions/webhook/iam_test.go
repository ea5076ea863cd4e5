package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack/iamcheck"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// bigBody is over what an item holds inline, compressed too: it goes to S3.
var bigBody = iamcheck.Incompressible(400 << 10)

// The webhook function's grants in template.yaml are exactly what its code
// calls for, over the calls it serves: a webhook answered 202, a large
// body, one the table fails to take, a reply streamed while the step
// writes it, a reply read after the step closed it, and an unknown token. The workflows run on a worker of their own; only the function's
// calls are recorded.
func TestGrantsAreWhatTheFunctionCalls(t *testing.T) {
	stack := iamcheck.NewStack(t)
	tmpl := iamcheck.LoadTemplate(t)
	stack.PayloadKeyAsIn(t, tmpl, "WebhookFunction")
	rec := iamcheck.NewRecorder(stack.Names())
	cfg := stack.Recorded(rec)
	function := stack.World(t, cfg)
	// Event API requests bypass the SDK: a push variable given to this
	// function would need grants the template must show.
	rec.Watch(function)
	other := stack.World(t, stack.Config)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// Sealed runs, as the stack makes them: the function seals each
	// resume with its run's key, as main does.
	go func() {
		_ = workflow.NewWorker(other, workflow.WorkerOptions{Codec: aws.PayloadCodecFromEnv(stack.Config)}).Run(ctx)
	}()
	c := workflow.NewClient(other, workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(stack.Config)))
	sealing := workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg))

	t.Run("Accepted", func(t *testing.T) {
		path := webhookOf(t, ctx, c, iamAccepting, 2)
		if status, _ := call(t, ctx, workflow.NewClient(function, sealing), path, "small"); status != http.StatusAccepted {
			t.Fatalf("a small body got %d", status)
		}
		// A large body goes to S3 first; when the table then refuses the
		// message, its object is deleted again.
		refusing := stack.World(t, stack.Recorded(rec, iamcheck.Failing(func(params any) bool {
			_, put := params.(*dynamodb.PutItemInput)
			return put
		})))
		rec.Watch(refusing)
		if status, _ := call(t, ctx, workflow.NewClient(refusing, sealing), path, bigBody); status != http.StatusInternalServerError {
			t.Fatalf("a large body the table refused got %d", status)
		}
		if status, _ := call(t, ctx, workflow.NewClient(function, sealing), path, bigBody); status != http.StatusAccepted {
			t.Fatalf("a large body got %d", status)
		}
	})
	t.Run("StreamedReply", func(t *testing.T) {
		// The step writes a small chunk and a large one, then waits until
		// the caller has read both: the function reads them live.
		gate := make(chan struct{})
		iamGates.Store(t.Name(), gate)
		path := webhookOf(t, ctx, c, iamReplying, 1)
		resp, err := lambdaurl.Wrap(newHandler(workflow.NewClient(function, sealing)))(ctx, urlRequest("POST", path, t.Name()))
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, len("small\n")+len(bigBody))
		if _, err := io.ReadFull(resp.Body, head); err != nil {
			t.Fatalf("reading the live chunks: %v", err)
		}
		close(gate)
		if rest, err := io.ReadAll(resp.Body); err != nil || string(rest) != "end\n" {
			t.Fatalf("the rest of the reply: %q, %v", rest, err)
		}
	})
	t.Run("ClosedReply", func(t *testing.T) {
		// The function reads the reply only once the step has closed it.
		closed := make(chan struct{})
		iamGates.Store(t.Name(), closed)
		path := webhookOf(t, ctx, c, iamReplying, 1)
		status, body := call(t, ctx, workflow.NewClient(&iamcheck.Interposed{World: function, BeforeRead: func() { <-closed }}, sealing), path, t.Name())
		if status != http.StatusOK || body != "small\n"+bigBody+"end\n" {
			t.Fatalf("the closed reply: %d, %d bytes", status, len(body))
		}
	})
	t.Run("UnknownToken", func(t *testing.T) {
		if status, _ := call(t, ctx, workflow.NewClient(function, sealing), workflow.WebhookPath+"wh_unknown", ""); status != http.StatusNotFound {
			t.Fatalf("an unknown token got %d", status)
		}
	})
	iamcheck.Check(t, tmpl, "WebhookFunction", rec)
}

// iamAccepting takes n calls of a webhook answered 202.
var iamAccepting = workflow.Define("iamtest.accepting", func(ctx workflow.Context, n int) (struct{}, error) {
	wh := workflow.CreateWebhook(ctx)
	if err := workflow.SetAttributes(ctx, map[string]string{"url": wh.URL(ctx)}); err != nil {
		return struct{}{}, err
	}
	for range n {
		if _, err := wh.Receive(ctx); err != nil {
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
})

// iamGates holds, by the calling subtest's name (the request's body), the
// channel iamReply closes once it has written its reply, or waits on
// before the reply's last chunk: a *sync.Map of chan struct{}.
var iamGates sync.Map

var iamReply = workflow.DefineStep("iamtest.reply", func(ctx context.Context, msg workflow.WebhookMessage) (struct{}, error) {
	name := string(msg.Data.Body)
	g, _ := iamGates.Load(name)
	gate := g.(chan struct{})
	streamed := strings.HasSuffix(name, "StreamedReply")
	body := workflow.NewStream(func(yield func([]byte) bool) error {
		if !yield([]byte("small\n")) || !yield([]byte(bigBody)) {
			return nil
		}
		if streamed {
			<-gate
		}
		yield([]byte("end\n"))
		return nil
	})
	if err := msg.RespondWith(ctx, workflow.WebhookResponse{Status: http.StatusOK, Stream: body}); err != nil {
		return struct{}{}, err
	}
	if !streamed {
		close(gate)
	}
	return struct{}{}, nil
})

// iamReplying answers n calls of a webhook with iamReply.
var iamReplying = workflow.Define("iamtest.replying", func(ctx workflow.Context, n int) (struct{}, error) {
	wh := workflow.CreateWebhook(ctx, workflow.WithManualResponse())
	if err := workflow.SetAttributes(ctx, map[string]string{"url": wh.URL(ctx)}); err != nil {
		return struct{}{}, err
	}
	for range n {
		msg, err := wh.Receive(ctx)
		if err != nil {
			return struct{}{}, err
		}
		if _, err := iamReply.Call(ctx, msg); err != nil {
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
})

// webhookOf starts a run of wf and returns its webhook's path.
func webhookOf(t *testing.T, ctx context.Context, c *workflow.Client, wf *workflow.Workflow[int, struct{}], n int) string {
	t.Helper()
	run, err := workflow.Start(ctx, c, wf, n)
	if err != nil {
		t.Fatal(err)
	}
	return iamcheck.Attribute(t, ctx, run.Attributes, "url") // no base URL: the URL is the path
}

// call makes a request of the function as Lambda does, through lambdaurl,
// and returns the status and the whole body.
func call(t *testing.T, ctx context.Context, c *workflow.Client, path, body string) (int, string) {
	t.Helper()
	resp, err := lambdaurl.Wrap(newHandler(c))(ctx, urlRequest("POST", path, body))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b.String()
}
