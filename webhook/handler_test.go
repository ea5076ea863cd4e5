package webhook_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// publish hands the webhook's URL to the test through the run's stream.
var publish = workflow.DefineStep("webhook.publish", func(ctx context.Context, url string) (struct{}, error) {
	w, err := workflow.Writer[string](ctx, "url")
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, w.Write(url)
})

var streamGate chan struct{}

// answer streams an NDJSON body: one line, then (once the test has read
// it) two more. With mode "flaky" the first attempt breaks off after the
// first line.
var answer = workflow.DefineStep("webhook.answer", func(ctx context.Context, m workflow.WebhookMessage) (struct{}, error) {
	info, _ := workflow.GetStepInfo(ctx)
	flaky := strings.Contains(m.Data.URL, "flaky")
	return struct{}{}, m.RespondWith(ctx, workflow.WebhookResponse{
		Status: http.StatusOK,
		Header: http.Header{"Content-Type": {"application/x-ndjson"}},
		Stream: workflow.NewStream(func(yield func([]byte) bool) error {
			yield([]byte(`{"n":1}` + "\n"))
			if flaky && info.Attempt == 1 {
				return errors.New("connection to the model dropped")
			}
			if !flaky {
				<-streamGate
			}
			yield([]byte(`{"n":2}` + "\n"))
			yield([]byte(`{"n":3}` + "\n"))
			return nil
		}),
	})
}, workflow.WithBackoff(func(int) time.Duration { return 0 }))

type hookSpec struct {
	Mode  string `json:"mode"` // "accept", "static", "manual"
	Calls int    `json:"calls"`
}

var receiver = workflow.Define("webhook.receiver", func(ctx workflow.Context, spec hookSpec) ([]string, error) {
	// X-Test is no header a webhook records by default: the receiver names it.
	opts := []workflow.WebhookOption{workflow.WithRequestHeaders("X-Test")}
	switch spec.Mode {
	case "manual":
		opts = append(opts, workflow.WithManualResponse())
	case "static":
		opts = append(opts, workflow.WithStaticResponse(workflow.WebhookResponse{Status: http.StatusCreated, Header: http.Header{"X-Kind": {"static"}}, Body: []byte("noted")}))
	}
	wh := workflow.CreateWebhook(ctx, opts...)
	if _, err := publish.Call(ctx, wh.URL(ctx)); err != nil {
		return nil, err
	}
	var seen []string
	for m, err := range wh.All(ctx) {
		if err != nil {
			return seen, err
		}
		seen = append(seen, fmt.Sprintf("%s %s %s %s", m.Data.Method, m.Data.URL, m.Data.Header.Get("X-Test"), m.Data.Body))
		if spec.Mode == "manual" {
			if _, err := answer.Call(ctx, m); err != nil {
				return seen, err
			}
		}
		if len(seen) == spec.Calls {
			break
		}
	}
	return seen, nil
})

var plain = workflow.Define("webhook.plain", func(ctx workflow.Context, token string) (string, error) {
	_, err := workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
	return "", err
})

var responding = workflow.Define("webhook.responding", func(ctx workflow.Context, token string) (string, error) {
	_, err := workflow.CreateRespondingHook[string, string](ctx, workflow.WithToken(token)).Receive(ctx)
	return "", err
})

type fixture struct {
	ctx    context.Context
	world  *memory.World
	client *workflow.Client
	server *httptest.Server
}

// setup serves the webhook route on 127.0.0.1 and runs a worker.
func setup(t *testing.T, opts ...webhook.Option) *fixture { return setupWith(t, nil, opts...) }

// setupWith is setup with options for the route's client.
func setupWith(t *testing.T, clientOpts []workflow.ClientOption, opts ...webhook.Option) *fixture {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	w := memory.New()
	c := workflow.NewClient(w, clientOpts...)
	mux := http.NewServeMux()
	mux.Handle(webhook.Pattern, webhook.NewHandler(c, opts...))
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	go workflow.NewWorker(w, workflow.WorkerOptions{WebhookBaseURL: srv.URL}).Run(ctx)
	return &fixture{ctx: ctx, world: w, client: c, server: srv}
}

// start starts a receiver and returns its run and the webhook's URL.
func (f *fixture) start(t *testing.T, spec hookSpec) (*workflow.Run[[]string], string) {
	t.Helper()
	run, err := workflow.Start(f.ctx, f.client, receiver, spec)
	if err != nil {
		t.Fatal(err)
	}
	for chunk, err := range run.Readable(f.ctx, "url", 0) {
		if err != nil {
			t.Fatal(err)
		}
		var url string
		if err := chunk.Decode(&url); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(url, f.server.URL+workflow.WebhookPath+"hk_") {
			t.Fatalf("webhook URL %q", url)
		}
		return run, url
	}
	t.Fatal("the webhook's URL was never published")
	return nil, ""
}

func (f *fixture) call(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test", "yes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestWebhookAcceptsAnyMethodWith202(t *testing.T) {
	f := setup(t)
	run, url := f.start(t, hookSpec{Mode: "accept", Calls: 3})
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		resp, body := f.call(t, method, url+"?q=1", "body of "+method)
		if resp.StatusCode != http.StatusAccepted || body != "" {
			t.Fatalf("%s: %d %q, want 202 and no body", method, resp.StatusCode, body)
		}
	}
	seen, err := run.Result(f.ctx)
	path := strings.TrimPrefix(url, f.server.URL)
	want := []string{"GET " + path + "?q=1 yes body of GET", "POST " + path + "?q=1 yes body of POST", "DELETE " + path + "?q=1 yes body of DELETE"}
	if err != nil || strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("the workflow saw %q, %v\nwant %q", seen, err, want)
	}
}

func TestWebhookSendsItsStaticResponse(t *testing.T) {
	f := setup(t)
	run, url := f.start(t, hookSpec{Mode: "static", Calls: 1})
	resp, body := f.call(t, http.MethodPost, url, "x")
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Kind") != "static" || body != "noted" {
		t.Fatalf("got %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if _, err := run.Result(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// A manual webhook's caller receives the body chunk by chunk as the step
// writes it: the step holds its second chunk until the caller has read
// the first, so an unflushed response would never arrive.
func TestManualWebhookStreamsTheStepsResponse(t *testing.T) {
	streamGate = make(chan struct{})
	f := setup(t)
	run, url := f.start(t, hookSpec{Mode: "manual", Calls: 1})
	resp, err := http.Post(url, "text/plain", strings.NewReader("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("got %d %v", resp.StatusCode, resp.Header)
	}
	lines := bufio.NewScanner(resp.Body)
	var got []string
	for lines.Scan() {
		if got = append(got, lines.Text()); len(got) == 1 {
			close(streamGate)
		}
	}
	if err := lines.Err(); err != nil || strings.Join(got, "") != `{"n":1}{"n":2}{"n":3}` {
		t.Fatalf("read %q, %v", got, err)
	}
	if _, err := run.Result(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// When the step streaming a response fails after part of it went out and
// its retry starts over, the part sent cannot be taken back: the handler
// cuts the connection so the caller does not take a short body for a
// whole one.
func TestManualWebhookCutsAResponseARetryStartsOver(t *testing.T) {
	f := setup(t)
	run, url := f.start(t, hookSpec{Mode: "manual", Calls: 1})
	resp, err := http.Post(url+"?flaky", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("read the whole body %q without an error", body)
	}
	if _, err := run.Result(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// Only webhooks are public: an unknown token, a plain hook and a
// responding hook all get the same empty 404, and nothing is written.
func TestNonWebhookTokensAre404(t *testing.T) {
	f := setup(t)
	suffix := rand.Text()
	var runs []*workflow.Run[string]
	for _, wf := range []*workflow.Workflow[string, string]{plain, responding} {
		run, err := workflow.Start(f.ctx, f.client, wf, wf.Name()+":"+suffix)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
		waitForHook(t, f, wf.Name()+":"+suffix)
	}
	for _, token := range []string{"hk_unknown", plain.Name() + ":" + suffix, responding.Name() + ":" + suffix} {
		resp, body := f.call(t, http.MethodPost, workflow.WebhookURL(f.server.URL, token), "payload")
		if resp.StatusCode != http.StatusNotFound || body != "" {
			t.Errorf("token %q: %d %q, want an empty 404", token, resp.StatusCode, body)
		}
	}
	for _, run := range runs {
		evs, _ := f.world.Events(f.ctx, run.ID, 0)
		for _, ev := range evs {
			if ev.Type == world.HookReceived {
				t.Errorf("run %s received a webhook call", run.ID)
			}
		}
	}
}

func waitForHook(t *testing.T, f *fixture, token string) {
	t.Helper()
	for {
		if _, err := f.client.GetHook(f.ctx, token); err == nil {
			return
		}
		select {
		case <-f.ctx.Done():
			t.Fatalf("hook %q never appeared", token)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestWebhookRefusesABodyOverTheLimit(t *testing.T) {
	f := setup(t, webhook.WithMaxBody(16))
	run, url := f.start(t, hookSpec{Mode: "accept", Calls: 1})
	resp, body := f.call(t, http.MethodPost, url, strings.Repeat("x", 17))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || body != "" {
		t.Fatalf("got %d %q, want 413", resp.StatusCode, body)
	}
	if resp, _ := f.call(t, http.MethodPost, url, strings.Repeat("y", 16)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a body at the limit got %d", resp.StatusCode)
	}
	seen, err := run.Result(f.ctx)
	if err != nil || len(seen) != 1 || !strings.HasSuffix(seen[0], strings.Repeat("y", 16)) {
		t.Fatalf("the workflow saw %q, %v; want only the body at the limit", seen, err)
	}
}

// ResumeWebhook serves a webhook from any Go code, without the handler.
func TestResumeWebhookFromGo(t *testing.T) {
	f := setup(t)
	run, url := f.start(t, hookSpec{Mode: "static", Calls: 1})
	token := url[strings.LastIndex(url, "/")+1:]
	resp, err := f.client.ResumeWebhook(f.ctx, token, workflow.WebhookRequest{Method: http.MethodPut, URL: "/anything", Body: []byte("z")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusCreated || string(resp.Body) != "noted" {
		t.Fatalf("got %d %q", resp.Status, resp.Body)
	}
	if seen, err := run.Result(f.ctx); err != nil || seen[0] != "PUT /anything  z" {
		t.Fatalf("the workflow saw %q, %v", seen, err)
	}
	if _, err := f.client.ResumeWebhook(f.ctx, token, workflow.WebhookRequest{Method: http.MethodPut, URL: "/"}); !errors.Is(err, workflow.ErrHookNotFound) {
		t.Fatalf("after the run ended: %v, want ErrHookNotFound", err)
	}
}

var tryRespond = workflow.DefineStep("webhook.tryRespond", func(ctx context.Context, m workflow.WebhookMessage) (bool, error) {
	return errors.Is(m.RespondWith(ctx, workflow.WebhookResponse{}), workflow.ErrNoReplyChannel), nil
})

// unanswered never answers a manual webhook's call; a non-manual one's
// calls have no reply channel to answer on.
var unanswered = workflow.Define("webhook.unanswered", func(ctx workflow.Context, manual bool) (string, error) {
	opts := []workflow.WebhookOption{workflow.WithMetadata(map[string]bool{"manual": manual})}
	if manual {
		opts = append(opts, workflow.WithManualResponse())
	}
	wh := workflow.CreateWebhook(ctx, opts...)
	if _, err := publish.Call(ctx, wh.URL(ctx)); err != nil {
		return "", err
	}
	m, err := wh.Receive(ctx)
	if err != nil || manual {
		return "", err
	}
	refused, err := tryRespond.Call(ctx, m)
	return fmt.Sprint("no reply channel: ", refused), err
})

func TestWebhookCallsWithoutAnAnswer(t *testing.T) {
	f := setup(t)
	for _, manual := range []bool{true, false} {
		run, err := workflow.Start(f.ctx, f.client, unanswered, manual)
		if err != nil {
			t.Fatal(err)
		}
		var url string
		for chunk, err := range run.Readable(f.ctx, "url", 0) {
			if err == nil {
				err = chunk.Decode(&url)
			}
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		info, err := f.client.GetHook(f.ctx, url[strings.LastIndex(url, "/")+1:])
		if err != nil || !info.Webhook || info.Responds != manual || string(info.Metadata) != fmt.Sprintf(`{"manual":%v}`, manual) {
			t.Fatalf("GetHook = %+v, %v", info, err)
		}
		resp, body := f.call(t, http.MethodPost, url, "anyone?")
		got, err := run.Result(f.ctx)
		switch {
		case err != nil:
			t.Fatal(err)
		case manual && (resp.StatusCode != http.StatusInternalServerError || body != ""):
			t.Fatalf("a manual webhook whose run ends without answering: %d %q, want 500", resp.StatusCode, body)
		case !manual && (resp.StatusCode != http.StatusAccepted || got != "no reply channel: true"):
			t.Fatalf("a default webhook: %d, the run says %q", resp.StatusCode, got)
		}
	}
}
