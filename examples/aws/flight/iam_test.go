package main

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/examples/flight"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack/iamcheck"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// The flight function's grants in the examples' template are exactly
// what its code calls for, over a booking as a traveller's browser makes
// it through the Function URL (lambdaurl, as Lambda runs the function): a session whose
// first turn streams while the model is still writing it (the model is
// held mid-answer until the function has passed on its first words), the
// booking approved from the stream, a large message (refused once by the
// table, then taken), a reconnect from a cursor that gets exactly the
// parts after it, live, until the session ends, and the same reconnect
// once the run's stream is compacted. The session runs on a worker of its own with
// the scripted model; only the function's calls are recorded.
func TestGrantsAreWhatTheFunctionCalls(t *testing.T) {
	stack := iamcheck.NewStack(t)
	tmpl := iamcheck.LoadTemplate(t, "examples/aws/template.yaml") // beside template.yaml's stack
	stack.PayloadKeyAsIn(t, tmpl, "FlightFunction")
	if !stack.StreamEventsAsIn(t, tmpl, "FlightFunction") {
		t.Fatal("the template gives the flight function, which reads run streams, no Event API to subscribe to their writes on")
	}
	rec := iamcheck.NewRecorder(stack.Names())
	cfg := stack.Recorded(rec)
	function := stack.World(t, cfg)
	rec.Watch(function)
	// Each instance of the function seals with a codec of its own, as
	// main builds it: the one that starts a session makes its data key,
	// another unwraps it.
	sealing := func() workflow.ClientOption { return workflow.WithPayloadCodec(aws.PayloadCodecFromEnv(cfg)) }
	other := stack.World(t, stack.Config)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	flight.PriceWatch = time.Second
	model := &heldModel{Model: flight.Scripted(), reached: make(chan struct{}), open: make(chan struct{})}
	flight.UseModel(model)
	go func() {
		_ = workflow.NewWorker(other, workflow.WorkerOptions{Registry: workflow.NewRegistry(flight.Session.Workflow()), Codec: aws.PayloadCodecFromEnv(stack.Config)}).Run(ctx)
	}()
	fn := lambdaurl.Wrap(flight.Handler(workflow.NewClient(function, sealing())))

	resp := call(t, ctx, fn, "POST", "/flight/sessions", chat.ContentTypeNDJSON,
		chat.Turn{Messages: []agent.Message{agent.UserMessage("Book me SFO to JFK on Dec 24 under $400, for Ana Lima.")}})
	session := resp.Headers[chat.RunIDHeader]
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("starting a session: %d, headers %v", resp.StatusCode, resp.Headers)
	}
	<-model.reached
	var seen []frame
	for f, err := range frames(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		if f.End != "" || f.Error != "" {
			if f.End != "running" {
				t.Fatalf("the turn ended with %+v, want the session running", f)
			}
			break
		}
		seen = append(seen, f)
		if f.Part.Type == agent.PartTextDelta {
			model.release() // its first words came while the model was held
		}
		if p := f.Part; p.Type == agent.PartToolCall && p.NeedsApproval {
			approval := call(t, ctx, fn, "POST", "/flight/approvals/"+p.ToolCall.ID, "application/json", agent.Approval{Approved: true})
			if approval.StatusCode != http.StatusAccepted {
				t.Fatalf("approving %s: %d", p.ToolCall.ID, approval.StatusCode)
			}
		}
	}
	if text := agent.Text(parts(seen)); !strings.Contains(text, "CONF-UA415") {
		t.Fatalf("the turn's text %q does not confirm the booking", text)
	}

	// A message over what an item holds goes to S3 first; when the table
	// then refuses it, its object is deleted again.
	big := chat.Message{Text: iamcheck.Incompressible(400 << 10)}
	refusing := stack.World(t, stack.Recorded(rec, iamcheck.Failing(func(params any) bool {
		_, put := params.(*dynamodb.PutItemInput)
		return put
	})))
	rec.Watch(refusing)
	messages := "/flight/sessions/" + session + "/messages"
	if r := call(t, ctx, lambdaurl.Wrap(flight.Handler(workflow.NewClient(refusing, sealing()))), "POST", messages, "application/json", big); r.StatusCode != http.StatusInternalServerError {
		t.Fatalf("a large message the table refused got %d", r.StatusCode)
	}
	if r := call(t, ctx, fn, "POST", messages, "application/json", big); r.StatusCode != http.StatusAccepted {
		t.Fatalf("sending a large message: %d", r.StatusCode)
	}

	// A reconnect from a cursor mid-turn gets the parts after it, then,
	// live, the large message and its answer, and after the end message
	// the end. Once the run's stream is compacted into one object, the
	// same reconnect gets the same frames.
	cursor := seen[len(seen)/2].Index
	reconnect := "/flight/sessions/" + session + "/stream?" + chat.StartIndexParam + "=" + strconv.FormatInt(cursor, 10)
	var live []frame
	for f, err := range frames(call(t, ctx, fn, "GET", reconnect, chat.ContentTypeNDJSON, nil).Body) {
		if err != nil {
			t.Fatal(err)
		}
		if f.End != "" || f.Error != "" {
			if f.End != string(workflow.StatusCompleted) {
				t.Fatalf("the reconnect ended with %+v", f)
			}
			break
		}
		if live = append(live, f); f.Part.Type == agent.PartMessage && len(f.Part.Text) == len(big.Text) {
			if r := call(t, ctx, fn, "POST", messages, "application/json", chat.Message{End: true}); r.StatusCode != http.StatusAccepted {
				t.Fatalf("ending the session: %d", r.StatusCode)
			}
		}
	}
	want := seen[len(seen)/2:]
	if len(live) < len(want)+2 || !sameFrames(live[:len(want)], want) || live[len(want)].Part.Type != agent.PartMessage {
		t.Fatalf("reconnected from %d: %d frames, want the %d after the cursor, then the large message and its answer", cursor, len(live), len(want))
	}
	awaitCompacted(t, ctx, stack, session)
	var compacted []frame
	for f, err := range frames(call(t, ctx, fn, "GET", reconnect, chat.ContentTypeNDJSON, nil).Body) {
		if err != nil {
			t.Fatal(err)
		}
		if f.End != "" || f.Error != "" {
			break
		}
		compacted = append(compacted, f)
	}
	if !sameFrames(compacted, live) {
		t.Fatalf("reconnected to the compacted stream: %d frames, want the %d of the live one", len(compacted), len(live))
	}
	iamcheck.Check(t, tmpl, "FlightFunction", rec)
}

// awaitCompacted waits until the session's agent stream is compacted:
// until a read of it, through a World of its own whose calls a probe
// records, goes to the compacted object rather than the chunk items (the
// object is written before the stream's head names it, and a read in
// between still reads the items).
func awaitCompacted(t *testing.T, ctx context.Context, stack *iamcheck.Stack, session string) {
	t.Helper()
	name := engine.RunStream(session, flight.Assistant.Namespace())
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		probe := iamcheck.NewRecorder(stack.Names())
		if _, _, err := stack.World(t, stack.Recorded(probe)).ReadStream(ctx, name, 0); err != nil {
			t.Fatal(err)
		}
		needs, err := probe.Needs()
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(needs, func(g iamcheck.Grant) bool {
			return g.Action == "s3:GetObject" && strings.HasPrefix(g.Resource, "${Bucket.Arn}/streams/")
		}) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run's stream %s was never compacted", name)
		case <-time.After(wait):
		}
	}
}

// heldModel holds its first answer after its first two deltas until
// release, once reached is closed.
type heldModel struct {
	agent.Model
	first, releasing sync.Once
	reached, open    chan struct{}
}

func (m *heldModel) release() { m.releasing.Do(func() { close(m.open) }) }

func (m *heldModel) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	held := false
	m.first.Do(func() { held = true })
	return func(yield func(agent.Delta, error) bool) {
		n := 0
		for d, err := range m.Model.Stream(ctx, req) {
			if !yield(d, err) {
				return
			}
			if n++; held && n == 2 {
				close(m.reached)
				select {
				case <-m.open:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

// call makes a request of the function as Lambda does, through lambdaurl;
// body, if not nil, goes as JSON.
func call(t *testing.T, ctx context.Context, fn func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error), method, path, accept string, body any) *events.LambdaFunctionURLStreamingResponse {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	rawPath, query, _ := strings.Cut(path, "?")
	resp, err := fn(ctx, &events.LambdaFunctionURLRequest{
		Version:        "2.0",
		RawPath:        rawPath,
		RawQueryString: query,
		Headers:        map[string]string{"content-type": "application/json", "accept": accept},
		Body:           string(b),
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: rawPath},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// frame is one NDJSON line of a session's stream.
type frame struct {
	Index int64
	Part  agent.Part      `json:"-"`
	Raw   json.RawMessage `json:"part"`
	End   string
	Error string
}

func frames(body io.Reader) iter.Seq2[frame, error] {
	return func(yield func(frame, error) bool) {
		dec := json.NewDecoder(body)
		for {
			var f frame
			if err := dec.Decode(&f); err != nil {
				yield(f, err)
				return
			}
			if len(f.Raw) > 0 {
				if err := json.Unmarshal(f.Raw, &f.Part); err != nil {
					yield(f, err)
					return
				}
			}
			if !yield(f, nil) {
				return
			}
		}
	}
}

func parts(fs []frame) []agent.Part {
	var ps []agent.Part
	for _, f := range fs {
		ps = append(ps, f.Part)
	}
	return ps
}

func sameFrames(a, b []frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Index != b[i].Index || string(a[i].Raw) != string(b[i].Raw) {
			return false
		}
	}
	return true
}
