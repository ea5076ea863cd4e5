// Package fakeprovider is a local stand-in for a model provider's HTTP
// API, for testing provider adapters over their real SDK clients: a
// server on 127.0.0.1 that answers each request with the next of its
// scripted replies (a recorded stream, an error, a throttle, a stream cut
// short), records the requests, and counts the answers a provider would
// bill. It speaks Server-Sent Events (OpenAI, Anthropic) and the AWS
// event stream encoding (Bedrock ConverseStream), and depends on nothing
// but the standard library.
package fakeprovider

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Encoding is how a reply's events go on the wire.
type Encoding int

// The encodings.
const (
	// SSE is text/event-stream: an "event:" line when the event has a
	// type, a "data:" line, a blank line.
	SSE Encoding = iota
	// EventStream is application/vnd.amazon.eventstream, as Bedrock
	// streams: one binary message per event, its type in the
	// :event-type header. An event whose type ends in "Exception" is sent
	// as an exception message, as AWS sends a stream's errors.
	EventStream
)

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status (default 200).
	Status int
	// Header is added to the response's headers (e.g. Retry-After).
	Header map[string]string
	// Body is sent as is, as JSON, when the reply has no Events: an error
	// reply's body.
	Body string
	// Events are streamed one at a time, each flushed to the client.
	Events []Event
	// Cut drops the connection after the Events, as a network failure
	// would, instead of ending the response.
	Cut bool
}

// Event is one event of a streamed reply.
type Event struct {
	Type string
	Data string
}

// Request is a request the server got.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Server is a running fake provider.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	encoding Encoding
	srv      *httptest.Server
	t        testing.TB // nil outside a test

	mu       sync.Mutex
	replies  []Reply
	answer   func(Request) Reply
	requests []Request
	billed   int
}

// New starts a server that streams its replies' events in encoding. Close
// it when done.
func New(encoding Encoding, replies ...Reply) *Server {
	s := &Server{encoding: encoding, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Start is New for a test: the server stops when the test ends, and a
// request past the script fails the test.
func Start(t testing.TB, encoding Encoding, replies ...Reply) *Server {
	s := New(encoding, replies...)
	s.t = t
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Script appends replies to the script.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Answer makes the server reply to each request with what f returns for
// it, instead of from its script, so that a request sent again (a
// retried call, a restarted process) can get the same answer. f runs
// outside the server's lock: it may block, as a slow provider does.
func (s *Server) Answer(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = f
}

// Requests returns the requests the server got, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Billed returns how many requests were answered with a 2xx status:
// what a provider bills, whether or not the stream got to its end.
func (s *Server) Billed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.billed
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reply, ok := s.next(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	if !ok {
		msg := fmt.Sprintf("fakeprovider: no reply scripted for %s %s", r.Method, r.URL.Path)
		if s.t != nil {
			s.t.Error(msg)
		}
		http.Error(w, msg, http.StatusNotImplemented)
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if len(reply.Events) == 0 {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	s.stream(w, status, reply)
}

// next takes the next reply, or Answer's, and records the request.
func (s *Server) next(req Request) (Reply, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	answer := s.answer
	s.mu.Unlock()
	var reply Reply
	if answer != nil {
		reply = answer(req)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if answer == nil {
		if len(s.replies) == 0 {
			return Reply{}, false
		}
		reply, s.replies = s.replies[0], s.replies[1:]
	}
	if reply.Status == 0 || reply.Status/100 == 2 {
		s.billed++
	}
	return reply, true
}

func (s *Server) stream(w http.ResponseWriter, status int, reply Reply) {
	encode := writeSSE
	w.Header().Set("Content-Type", "text/event-stream")
	if s.encoding == EventStream {
		encode = writeEventStream
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	for _, e := range reply.Events {
		if err := encode(w, e); err != nil {
			return // the client went away
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	if reply.Cut {
		// The server closes the connection without ending the chunked
		// body: the client reads an unexpected EOF.
		panic(http.ErrAbortHandler)
	}
}

func writeSSE(w io.Writer, e Event) error {
	if e.Type != "" {
		if _, err := fmt.Fprintf(w, "event: %s\n", e.Type); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "data: %s\n\n", e.Data)
	return err
}
