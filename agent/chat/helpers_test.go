package chat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	awsrig "github.com/lambdaworkflow/workflow/internal/testrig/awsworld"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// model is the model every test's agent calls; each test scripts it.
var model = &gatedModel{}

var (
	assistant = agent.New("chat.test", model)
	turns     = chat.NewSingleTurn(assistant)
	sessions  = chat.NewSession(assistant, chat.WithMaxTurns(10))
)

// gatedModel streams the scripted answers, each held halfway until the
// test opens the gate, so that a test can act while the model is
// mid-turn.
type gatedModel struct {
	mu      sync.Mutex
	inner   *agenttest.Model
	open    chan struct{}
	reached chan struct{}
}

// script sets the answers; every call holds halfway until release.
func script(answers ...[]agent.Delta) (m *agenttest.Model, release func()) {
	model.mu.Lock()
	defer model.mu.Unlock()
	model.inner = agenttest.New(answers...)
	model.open, model.reached = make(chan struct{}), make(chan struct{}, 1000)
	open := model.open
	return model.inner, sync.OnceFunc(func() { close(open) })
}

// waitMidTurn waits until a model call is held at the gate.
func waitMidTurn(t *testing.T) {
	t.Helper()
	model.mu.Lock()
	reached := model.reached
	model.mu.Unlock()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("no model call reached the middle of its answer")
	}
}

func (g *gatedModel) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	g.mu.Lock()
	inner, open, reached := g.inner, g.open, g.reached
	g.mu.Unlock()
	return func(yield func(agent.Delta, error) bool) {
		n := 0
		for d, err := range inner.Stream(ctx, req) {
			if n++; n == 3 {
				reached <- struct{}{}
				select {
				case <-open:
				case <-ctx.Done():
					yield(agent.Delta{}, ctx.Err())
					return
				}
			}
			if !yield(d, err) {
				return
			}
		}
	}
}

// words is an answer of n words, "w0 w1 ...", one text-delta part each.
func words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = "w" + strconv.Itoa(i)
	}
	return strings.Join(ws, " ")
}

// worlds are the Worlds the HTTP tests run on; "aws" is MiniStack's,
// on resources of the test's own, and skips the test if it is not running.
var worlds = map[string]func(t *testing.T) world.World{
	"memory": func(t *testing.T) world.World { return memory.New() },
	"local": func(t *testing.T) world.World {
		w, err := local.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	},
	"aws": func(t *testing.T) world.World {
		w, _, _ := awsrig.New(t, "wf-chat-", awsworld.Names{})
		return w
	},
}

// serve runs a worker on w and serves both patterns on 127.0.0.1:
// single-turn on /chat, sessions on /sessions, approvals on /approvals.
func serve(t *testing.T, w world.World) (*workflow.Client, *httptest.Server) {
	return serveRoutes(t, w, func(c *workflow.Client) map[string]http.Handler {
		return map[string]http.Handler{
			"/chat":       turns.Handler(c, "/chat"),
			"/sessions":   sessions.Handler(c, "/sessions"),
			"/approvals/": chat.ApprovalHandler(c, "/approvals"),
		}
	})
}

// serveRoutes runs a worker on w and serves on 127.0.0.1 the handlers
// routes returns, each under its pattern and, for a pattern without a
// trailing slash, under the pattern's subtree as well.
func serveRoutes(t *testing.T, w world.World, routes func(*workflow.Client) map[string]http.Handler) (*workflow.Client, *httptest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx) }()
	c := workflow.NewClient(w)
	mux := http.NewServeMux()
	for pattern, h := range routes(c) {
		mux.Handle(pattern, h)
		if !strings.HasSuffix(pattern, "/") {
			mux.Handle(pattern+"/", h)
		}
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return c, srv
}

// frame is one part a client got, or the stream's end.
type frame struct {
	Index int64
	Part  agent.Part
	Raw   string
	End   string // the run's status, on the last frame
	Error string
}

// readSSE parses an event stream as the HTML standard's EventSource does
// (fields, multi-line data, comments, the retry field), yielding one
// frame per dispatched event.
func readSSE(body io.Reader) iter.Seq2[frame, error] {
	return func(yield func(frame, error) bool) {
		sc := bufio.NewScanner(body)
		var event, id string
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if len(data) > 0 && !yield(sseFrame(event, id, strings.Join(data, "\n"))) {
					return
				}
				event, data = "", nil
				continue
			}
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "": // a comment
			case "event":
				event = value
			case "data":
				data = append(data, value)
			case "id":
				id = value
			case "retry":
				if _, err := strconv.Atoi(value); err != nil {
					yield(frame{}, fmt.Errorf("retry field %q", value))
					return
				}
			default:
				yield(frame{}, fmt.Errorf("unknown SSE field %q", field))
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(frame{}, err)
		}
	}
}

func sseFrame(event, id, data string) (frame, error) {
	var f frame
	switch event {
	case "end":
		var e struct{ Status string }
		err := json.Unmarshal([]byte(data), &e)
		f.End = e.Status
		return f, err
	case "error":
		var e struct{ Error string }
		err := json.Unmarshal([]byte(data), &e)
		f.Error = e.Error
		return f, err
	case "":
		i, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return f, fmt.Errorf("event id %q: %w", id, err)
		}
		f.Index, f.Raw = i, data
		return f, json.Unmarshal([]byte(data), &f.Part)
	}
	return f, fmt.Errorf("unknown event %q", event)
}

// readNDJSON parses one JSON object a line, skipping empty lines.
func readNDJSON(body io.Reader) iter.Seq2[frame, error] {
	return func(yield func(frame, error) bool) {
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			if len(sc.Bytes()) == 0 {
				continue
			}
			var line struct {
				Index *int64
				Part  json.RawMessage
				End   string
				Error string
			}
			f, err := frame{}, json.Unmarshal(sc.Bytes(), &line)
			switch {
			case err != nil:
			case line.Index != nil:
				f.Index, f.Raw = *line.Index, string(line.Part)
				err = json.Unmarshal(line.Part, &f.Part)
			case line.End != "" || line.Error != "":
				f.End, f.Error = line.End, line.Error
			default:
				err = fmt.Errorf("line %s is neither a part nor the end", sc.Text())
			}
			if !yield(f, err) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(frame{}, err)
		}
	}
}

// frames reads a streamed response to its end frame.
func frames(t *testing.T, resp *http.Response) (parts []frame, end frame) {
	t.Helper()
	defer resp.Body.Close()
	read := readSSE
	if ct := resp.Header.Get("Content-Type"); ct == chat.ContentTypeNDJSON {
		read = readNDJSON
	} else if ct != chat.ContentTypeSSE {
		t.Fatalf("Content-Type %q", ct)
	}
	for f, err := range read(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		if f.End != "" || f.Error != "" {
			return parts, f
		}
		parts = append(parts, f)
	}
	t.Fatalf("the stream ended without an end frame after %d parts", len(parts))
	return nil, frame{}
}

// request makes a request and fails the test on a transport error.
func request(t *testing.T, method, url, accept, body string, headers ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i]) // sent without it
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// userTurn is a Turn's JSON with one user message.
func userTurn(text string) string {
	return string(must(json.Marshal(chat.Turn{Messages: []agent.Message{agent.UserMessage(text)}})))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
