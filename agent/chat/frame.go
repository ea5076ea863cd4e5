package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// The media types a stream is served as, chosen by the request's Accept
// header.
const (
	// ContentTypeSSE is Server-Sent Events: one event per part, its id the
	// part's index in the run's stream (what EventSource sends back as
	// Last-Event-ID when it reconnects), its data the part's JSON; an
	// "end" event with the run's status closes the stream, an "error"
	// event reports a failure to read it.
	ContentTypeSSE = "text/event-stream"
	// ContentTypeNDJSON is one JSON object a line: {"index":N,"part":{...}}
	// per part, then {"end":"<run status>"} or {"error":"..."}.
	ContentTypeNDJSON = "application/x-ndjson"
)

// A frameWriter writes a stream's parts to a client in one framing.
type frameWriter interface {
	part(index int64, data json.RawMessage) error
	end(status string) error
	fail(msg string) error
	// comment keeps an idle connection open.
	comment() error
}

// negotiate picks the framing the Accept header prefers: the highest
// quality of the two media types, a wildcard counting for SSE, with SSE
// for a request that says nothing. ok is false if neither is acceptable.
func negotiate(accept string) (contentType string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return ContentTypeSSE, true
	}
	best, bestQ, bestExact := "", 0.0, false
	for _, item := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(item))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		var ct string
		switch mt {
		case ContentTypeSSE, "*/*", "text/*":
			ct = ContentTypeSSE
		case ContentTypeNDJSON, "application/jsonl", "application/*":
			ct = ContentTypeNDJSON
		default:
			continue
		}
		// An exact type beats a wildcard of the same quality; between
		// equals, the first listed wins.
		exact := !strings.Contains(mt, "*")
		if q > bestQ || (q == bestQ && exact && !bestExact) {
			best, bestQ, bestExact = ct, q, exact
		}
	}
	return best, bestQ > 0
}

// newFrameWriter starts a streamed response of type contentType.
func newFrameWriter(w http.ResponseWriter, contentType string) frameWriter {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies that buffer responses (nginx) pass this one through
	w.WriteHeader(http.StatusOK)
	f := flusher{w: w, rc: http.NewResponseController(w)}
	// The headers go out now, with the run's ID, not with the first part,
	// which may be long in coming; an SSE stream tells EventSource to wait
	// 1 s before it reconnects. A failed write shows on the first part.
	if contentType == ContentTypeNDJSON {
		_ = f.send(nil)
		return ndjson{f}
	}
	_ = f.send([]byte("retry: 1000\n\n"))
	return sse{f}
}

// flusher sends each frame as soon as it is written. A writer that cannot
// flush (lambdaurl's, whose writes go straight into the response pipe)
// sends it anyway.
type flusher struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flusher) send(b []byte) error {
	if _, err := f.w.Write(b); err != nil {
		return err
	}
	if err := f.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

type sse struct{ flusher }

func (s sse) part(index int64, data json.RawMessage) error {
	return s.send(fmt.Appendf(nil, "id: %d\ndata: %s\n\n", index, oneLine(data)))
}

func (s sse) end(status string) error {
	return s.send(fmt.Appendf(nil, "event: end\ndata: %s\n\n", mustJSON(map[string]string{"status": status})))
}

func (s sse) fail(msg string) error {
	return s.send(fmt.Appendf(nil, "event: error\ndata: %s\n\n", mustJSON(map[string]string{"error": msg})))
}

func (s sse) comment() error { return s.send([]byte(": keep-alive\n\n")) }

type ndjson struct{ flusher }

func (n ndjson) part(index int64, data json.RawMessage) error {
	return n.send(fmt.Appendf(nil, "{\"index\":%d,\"part\":%s}\n", index, oneLine(data)))
}

func (n ndjson) end(status string) error {
	return n.send(append(mustJSON(map[string]string{"end": status}), '\n'))
}

func (n ndjson) fail(msg string) error {
	return n.send(append(mustJSON(map[string]string{"error": msg}), '\n'))
}

// comment is an empty line, which NDJSON readers skip.
func (n ndjson) comment() error { return n.send([]byte("\n")) }

// oneLine returns a chunk's JSON without line breaks, which would end an
// SSE data field or an NDJSON record early. Writers store compact JSON,
// so this copies nothing in practice.
func oneLine(data json.RawMessage) []byte {
	if !bytes.ContainsAny(data, "\r\n") {
		return data
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return mustJSON(string(data)) // not JSON: send it as a string rather than break the framing
	}
	return b.Bytes()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings reach here
	}
	return b
}
