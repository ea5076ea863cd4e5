package chat_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
	"github.com/lambdaworkflow/workflow/internal/testrig/browsertest"
)

// page follows a stream with the browser's EventSource and keeps what it
// got: every event's ID and type, how often it connected, and the end.
const page = `<!doctype html><script>
const got = [], es = new EventSource(new URLSearchParams(location.search).get("stream"));
let opens = 0;
es.onopen = () => opens++;
es.onmessage = e => got.push(e.lastEventId + ":" + JSON.parse(e.data).type);
es.addEventListener("end", e => { es.close(); window.result = {got, opens, end: JSON.parse(e.data).status}; });
</script>`

// A real browser's EventSource follows a turn's stream while the model
// answers; the server cuts the connection after a few parts, EventSource
// reconnects by itself with Last-Event-ID, and the page ends up with
// every part once, in order, and the end.
func TestEventSourceInABrowserReconnectsWhereItLeftOff(t *testing.T) {
	browser := browsertest.New(t)
	c, srv := serve(t, worlds["local"](t))
	_, release := script(agenttest.Answer(words(30)))
	defer release()
	first := request(t, "POST", srv.URL+"/chat", chat.ContentTypeNDJSON, userTurn("hi"))
	runID := first.Header.Get(chat.RunIDHeader)
	first.Body.Close()
	waitMidTurn(t)

	var mu sync.Mutex
	var lastIDs []string
	var connected atomic.Bool
	pageHasTwo := make(chan struct{})
	stream := turns.Handler(c, "/chat")
	front := http.NewServeMux()
	front.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) })
	front.HandleFunc("GET /chat/{id}/stream", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		if connected.CompareAndSwap(false, true) {
			// The model is held after two deltas; the cut waits until the
			// page has them, since a reset connection can take unread bytes
			// with it.
			w = &cutAfter{ResponseWriter: w, parts: 2, seen: pageHasTwo, then: release}
		}
		stream.ServeHTTP(w, r)
	})
	pages := httptest.NewServer(front)
	defer pages.Close()

	type seen struct {
		Got   []string
		Opens int
		End   string
	}
	if err := browsertest.Do(browser, browsertest.Navigate(pages.URL+"/page?stream=/chat/"+runID+"/stream")); err != nil {
		t.Fatal(err)
	}
	_, err := browsertest.Run(browser, browsertest.Poll[bool](`got.length >= 2`))
	close(pageHasTwo) // in any case, so that the held handler returns
	if err != nil {
		t.Fatalf("the page never got the first two parts: %v", err)
	}
	result, err := browsertest.Run(browser, browsertest.Poll[seen](`window.result`))
	if err != nil {
		t.Fatalf("the page never saw the stream's end: %v", err)
	}
	want := fullStream(t, c, runID)
	if len(result.Got) != len(want) || result.End != "completed" || result.Opens != 2 {
		t.Fatalf("the page got %d parts in %d connections, end %q; the stream has %d:\n%s", len(result.Got), result.Opens, result.End, len(want), strings.Join(result.Got, " "))
	}
	for i, f := range want {
		if result.Got[i] != fmt.Sprintf("%d:%s", f.Index, f.Part.Type) {
			t.Fatalf("part %d: the page got %s, the stream has #%d %s", i, result.Got[i], f.Index, f.Part.Type)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lastIDs) != 2 || lastIDs[0] != "" || lastIDs[1] != "1" {
		t.Fatalf("Last-Event-ID of each connection: %q, want none then 1", lastIDs)
	}
}

// cutAfter breaks the connection when the handler writes the part after
// the first parts, as a network or a proxy would, once those are flushed
// and seen is closed, and then calls then.
type cutAfter struct {
	http.ResponseWriter
	parts int
	seen  <-chan struct{}
	then  func()
}

func (c *cutAfter) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("id: ")) {
		if c.parts == 0 {
			// What was written before the cut reaches the page, however
			// the handler batches its flushes.
			if f, ok := c.ResponseWriter.(http.Flusher); ok {
				f.Flush()
			}
			<-c.seen
			c.then()
			panic(http.ErrAbortHandler) // net/http closes the connection mid-response
		}
		c.parts--
	}
	return c.ResponseWriter.Write(b)
}

func (c *cutAfter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
