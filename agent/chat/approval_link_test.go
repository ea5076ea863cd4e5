package chat_test

import (
	"context"
	"crypto/rand"
	"html"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/internal/testrig/browsertest"
	"github.com/lambdaworkflow/workflow/webhook"
	"github.com/lambdaworkflow/workflow/world"
)

// links holds what the approval-link tests' tool did: the URL each call
// sent, how often it was sent, and the flights it booked.
var links = struct {
	sync.Mutex
	url    map[string]string
	sent   map[string]int
	booked map[string][]string
}{url: map[string]string{}, sent: map[string]int{}, booked: map[string][]string{}}

var bookByLink = agent.NewTool("book_by_link", "Book a flight once a person approves by e-mail",
	func(ctx context.Context, in struct{ Flight string }, call agent.ToolCallInfo) (string, error) {
		links.Lock()
		defer links.Unlock()
		links.booked[call.ID] = append(links.booked[call.ID], in.Flight)
		return "booked " + in.Flight, nil
	},
	agent.ApprovalByLink(func(ctx context.Context, call agent.ToolCall, url string) error {
		links.Lock()
		defer links.Unlock()
		links.url[call.ID] = url // the test's "e-mail"
		links.sent[call.ID]++
		return nil
	}, linkLifetime))

// linkLifetime is how long a link decides; no test waits that long.
const linkLifetime = 30 * 24 * time.Hour

// linkModel asks to book UA1 under the call ID the prompt names, then
// says it is done.
type linkModel struct{}

func (linkModel) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	answer := agenttest.Answer("Done.")
	if len(req.Messages) == 1 {
		answer = agenttest.Answer("", agenttest.Call(req.Messages[0].Text, "book_by_link", map[string]string{"Flight": "UA1"}))
	}
	return func(yield func(agent.Delta, error) bool) {
		for _, d := range answer {
			if !yield(d, nil) {
				return
			}
		}
	}
}

var (
	linkAgent = agent.New("chat.link.test", linkModel{}, agent.WithTools(bookByLink))
	linkFlow  = workflow.Define("chat.link.test", func(ctx workflow.Context, callID string) (*agent.Result, error) {
		return linkAgent.Run(ctx, []agent.Message{agent.UserMessage(callID)})
	})
)

// serveLinks runs a worker on w whose webhook URLs point at a server of
// the approval-link route.
func serveLinks(t *testing.T, w world.World) (*workflow.Client, *httptest.Server) {
	c := workflow.NewClient(w)
	mux := http.NewServeMux()
	mux.Handle(webhook.Pattern, chat.ApprovalLinkHandler(c))
	// The same links, served by a handler whose clock is past their
	// expiry.
	late := workflow.NewClient(w, workflow.WithClock(func() time.Time { return time.Now().Add(linkLifetime + time.Hour) }))
	mux.Handle("/late"+webhook.Pattern, http.StripPrefix("/late", chat.ApprovalLinkHandler(late)))
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = workflow.NewWorker(w, workflow.WorkerOptions{WebhookBaseURL: srv.URL}).Run(ctx)
	}()
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return c, srv
}

// startLinked starts a run whose tool call (ID callID) waits for approval
// and returns the run and the link it sent.
func startLinked(t *testing.T, c *workflow.Client, callID string) (*workflow.Run[*agent.Result], string) {
	t.Helper()
	links.Lock()
	delete(links.url, callID) // a run of the same test before, under -count
	delete(links.sent, callID)
	delete(links.booked, callID)
	links.Unlock()
	run, err := workflow.Start(t.Context(), c, linkFlow, callID)
	if err != nil {
		t.Fatal(err)
	}
	for pause, deadline := 10*time.Millisecond, time.Now().Add(60*time.Second); ; pause = min(2*pause, time.Second) {
		links.Lock()
		u := links.url[callID]
		links.Unlock()
		if u != "" {
			return run, u
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s never sent its approval link", callID)
		}
		time.Sleep(pause)
	}
}

type linkReply struct {
	status int
	body   string
}

func fetch(t *testing.T, method, u string, form url.Values) linkReply {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) linkReply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s %s: Content-Type %q, want a page", req.Method, req.URL.Path, ct)
	}
	return linkReply{resp.StatusCode, string(b)}
}

func decision(d string) url.Values { return url.Values{"decision": {d}} }

// stillWaits fails the test unless call's run is running, its tool has
// not run and its approval hook is still there.
func stillWaits(t *testing.T, c *workflow.Client, run *workflow.Run[*agent.Result], callID string) {
	t.Helper()
	if s, err := run.Status(t.Context()); err != nil || s != workflow.StatusRunning {
		t.Fatalf("run status %s (%v), want running", s, err)
	}
	if _, err := c.GetHook(t.Context(), callID); err != nil {
		t.Fatalf("the approval hook: %v", err)
	}
	links.Lock()
	defer links.Unlock()
	if n := len(links.booked[callID]); n != 0 {
		t.Fatalf("the tool ran %d times before a decision", n)
	}
}

// outcome waits for the run and returns its tool result and bookings.
func outcome(t *testing.T, run *workflow.Run[*agent.Result], callID string) (agent.ToolResult, []string) {
	t.Helper()
	res, err := run.Result(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	links.Lock()
	defer links.Unlock()
	if links.sent[callID] != 1 {
		t.Fatalf("the link was sent %d times", links.sent[callID])
	}
	return res.Messages[2].ToolResults[0], links.booked[callID]
}

// TestApprovalLinkDecidesOnce: on every World, a tool call waits for
// approval and sends its link once. Opening the link (GET, HEAD) shows
// the call and decides nothing; bad answers (no decision, an edited input
// that is not JSON, a form that does not decode, the wrong content type,
// a wrong token) get a page and lose nothing; the first POST decides,
// approving, denying or editing the input, and the tool runs exactly once;
// a later POST and GET find the link gone, with a page, never a 500; and
// POSTs racing each other, half approving and half denying, give one
// decision.
func TestApprovalLinkDecidesOnce(t *testing.T) {
	for name, open := range worlds {
		t.Run(name, func(t *testing.T) {
			c, srv := serveLinks(t, open(t))
			prefix := "call-link-" + name + "-" + strings.ToLower(rand.Text()[:8])

			t.Run("approve", func(t *testing.T) {
				id := prefix + "-approve"
				run, link := startLinked(t, c, id)
				if !strings.HasPrefix(link, srv.URL+workflow.WebhookPath) {
					t.Fatalf("link %q is not on the webhook route of %s", link, srv.URL)
				}
				for range 3 { // a mail scanner, a preview, the reader
					if p := fetch(t, "GET", link, nil); p.status != 200 || !strings.Contains(p.body, "Approve book_by_link?") || !strings.Contains(p.body, "UA1") {
						t.Fatalf("GET: %d %s", p.status, p.body)
					}
				}
				if p := fetch(t, "HEAD", link, nil); p.status != 200 || p.body != "" {
					t.Fatalf("HEAD: %d %q", p.status, p.body)
				}
				for _, bad := range []url.Values{decision("maybe"), {}, {"decision": {"approve"}, "input": {`{"Flight":`}}} {
					if p := fetch(t, "POST", link, bad); p.status != 400 || !strings.Contains(p.body, "Nothing was decided") {
						t.Fatalf("POST %v: %d %s", bad, p.status, p.body)
					}
				}
				for _, body := range []struct{ ct, body string }{{"application/x-www-form-urlencoded", "decision=%zz"}, {"text/plain", "decision=approve"}, {"application/json", `{"approved":`}} {
					req, _ := http.NewRequestWithContext(t.Context(), "POST", link, strings.NewReader(body.body))
					req.Header.Set("Content-Type", body.ct)
					if p := do(t, req); p.status != 400 {
						t.Fatalf("POST %s %q: %d %s", body.ct, body.body, p.status, p.body)
					}
				}
				if p := fetch(t, "PUT", link, decision("approve")); p.status != 405 {
					t.Fatalf("PUT: %d", p.status)
				}
				for _, wrong := range []string{link + "x", link[:len(link)-1], srv.URL + workflow.WebhookPath + id} {
					if p := fetch(t, "POST", wrong, decision("approve")); p.status != 404 || !strings.Contains(p.body, "no longer decides") {
						t.Fatalf("POST to a wrong token: %d %s", p.status, p.body)
					}
				}
				stillWaits(t, c, run, id)

				if p := fetch(t, "POST", link, decision("approve")); p.status != 200 || !strings.Contains(p.body, "Approved") {
					t.Fatalf("POST approve: %d %s", p.status, p.body)
				}
				r, booked := outcome(t, run, id)
				if r.Outcome != agent.Success || len(booked) != 1 || booked[0] != "UA1" {
					t.Fatalf("result %+v, booked %v", r, booked)
				}
				for _, method := range []string{"POST", "GET"} {
					if p := fetch(t, method, link, decision("deny")); p.status != 404 || !strings.Contains(p.body, "no longer decides") {
						t.Fatalf("%s after the decision: %d %s", method, p.status, p.body)
					}
				}
			})

			t.Run("deny", func(t *testing.T) {
				id := prefix + "-deny"
				run, link := startLinked(t, c, id)
				if p := fetch(t, "POST", link, url.Values{"decision": {"deny"}, "comment": {"too dear"}}); p.status != 200 || !strings.Contains(p.body, "Denied") {
					t.Fatalf("POST deny: %d %s", p.status, p.body)
				}
				r, booked := outcome(t, run, id)
				if r.Outcome != agent.Denied || r.Code != agent.NotApprovedCode || r.Error != "too dear" || len(booked) != 0 {
					t.Fatalf("result %+v, booked %v", r, booked)
				}
			})

			t.Run("edit", func(t *testing.T) {
				id := prefix + "-edit"
				run, link := startLinked(t, c, id)
				if p := fetch(t, "POST", link, url.Values{"decision": {"approve"}, "input": {`{"Flight": "UA2"}`}}); p.status != 200 {
					t.Fatalf("POST an edit: %d %s", p.status, p.body)
				}
				r, booked := outcome(t, run, id)
				if r.Outcome != agent.Success || string(r.Output) != `"booked UA2"` || len(booked) != 1 {
					t.Fatalf("result %+v, booked %v", r, booked)
				}
			})

			t.Run("race", func(t *testing.T) {
				id := prefix + "-race"
				run, link := startLinked(t, c, id)
				const racers = 8
				statuses := make(chan int, racers)
				var start sync.WaitGroup
				start.Add(1)
				for i := range racers {
					go func() {
						start.Wait()
						d := "approve"
						if i%2 == 1 {
							d = "deny"
						}
						req, _ := http.NewRequestWithContext(t.Context(), "POST", link, strings.NewReader(decision(d).Encode()))
						req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							statuses <- 0
							return
						}
						resp.Body.Close()
						statuses <- resp.StatusCode
					}()
				}
				start.Done()
				recorded := 0
				for range racers {
					switch s := <-statuses; s {
					case 200:
						recorded++
					case 404: // the run had taken a decision and let the link go
					default:
						t.Errorf("a racing POST got %d", s)
					}
				}
				r, booked := outcome(t, run, id)
				switch {
				case recorded == 0:
					t.Fatal("no racing POST was recorded")
				case r.Outcome == agent.Success && len(booked) == 1:
				case r.Outcome == agent.Denied && len(booked) == 0:
				default:
					t.Fatalf("result %+v, booked %v: not one decision", r, booked)
				}
				t.Logf("%d of %d racing POSTs recorded; the run took one: %s", recorded, racers, r.Outcome)
			})
		})
	}
}

// TestExpiredApprovalLinkSaysSo: a link past its expiry, which its run
// has not yet denied, answers GET and POST with a page saying it expired,
// and decides nothing.
func TestExpiredApprovalLinkSaysSo(t *testing.T) {
	c, srv := serveLinks(t, worlds["memory"](t))
	id := "call-link-late"
	run, link := startLinked(t, c, id)
	late := srv.URL + "/late" + strings.TrimPrefix(link, srv.URL)
	for _, method := range []string{"GET", "POST"} {
		if p := fetch(t, method, late, decision("approve")); p.status != http.StatusGone || !strings.Contains(p.body, "expired") {
			t.Fatalf("%s an expired link: %d %s", method, p.status, p.body)
		}
	}
	stillWaits(t, c, run, id)
	if p := fetch(t, "POST", link, decision("deny")); p.status != 200 {
		t.Fatalf("POST deny: %d %s", p.status, p.body)
	}
	if r, _ := outcome(t, run, id); r.Outcome != agent.Denied {
		t.Fatalf("result %+v", r)
	}
}

// TestApprovalLinkInABrowser: a headless Chromium opens the link, as the
// reader of the e-mail does, and clicks Approve; the page says so, and the
// tool runs once.
func TestApprovalLinkInABrowser(t *testing.T) {
	browser := browsertest.New(t)
	c, _ := serveLinks(t, worlds["local"](t))
	id := "call-link-browser"
	run, link := startLinked(t, c, id)
	if err := browsertest.Do(browser,
		browsertest.Navigate(link),
		browsertest.WaitVisible("#approve"),
		browsertest.SetValue("#comment", "fine by me"),
		browsertest.Click("#approve"),
	); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.Do(browser, browsertest.WaitVisible(`//h1[text()="Approved"]`)); err != nil {
		t.Fatalf("the page after the click: %v", err)
	}
	r, booked := outcome(t, run, id)
	if r.Outcome != agent.Success || len(booked) != 1 || booked[0] != "UA1" {
		t.Fatalf("result %+v, booked %v", r, booked)
	}
}

// TestApprovalLinkDefaultDenies: a mail scanner or a browser that submits
// the page's form the way implicit submission does (the fields as they are,
// with the form's first submit button) denies; it never approves.
func TestApprovalLinkDefaultDenies(t *testing.T) {
	c, _ := serveLinks(t, worlds["memory"](t))
	id := "call-link-default-" + strings.ToLower(rand.Text()[:8])
	run, link := startLinked(t, c, id)
	page := fetch(t, "GET", link, nil)
	button := regexp.MustCompile(`<button type="submit" name="([a-z]+)" value="([a-z]+)"`).FindStringSubmatch(page.body)
	input := regexp.MustCompile(`(?s)<textarea id="input" name="input"[^>]*>(.*?)</textarea>`).FindStringSubmatch(page.body)
	if button == nil || input == nil {
		t.Fatalf("no form on the page:\n%s", page.body)
	}
	form := url.Values{"input": {html.UnescapeString(input[1])}, "comment": {""}, button[1]: {button[2]}}
	if p := fetch(t, "POST", link, form); p.status != 200 || !strings.Contains(p.body, "Denied") {
		t.Fatalf("the form submitted with its default button (%s=%s): %d %s", button[1], button[2], p.status, p.body)
	}
	if result, booked := outcome(t, run, id); len(booked) != 0 || result.Outcome != agent.Denied {
		t.Fatalf("after the default submission the tool booked %q; its outcome %q", booked, result.Outcome)
	}
}
