package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Request headers and parameters the handlers read, and the header they
// answer with.
const (
	// RunIDHeader carries the ID of the run whose stream a response
	// serves: the session ID of a multi-turn session, the turn's run of a
	// single-turn one.
	RunIDHeader = "X-Workflow-Run-Id"
	// IdempotencyKeyHeader names a request so that a retried one is
	// processed once: the same turn's run, the same session, one message.
	// Without [WithCaller], the run a key starts is found by the key alone,
	// by any caller: make keys random.
	IdempotencyKeyHeader = "Idempotency-Key"
	// StartIndexParam is the query parameter of the cursor: the index, in
	// the run's stream, of the first part to send. An SSE client's
	// Last-Event-ID header (the last index it got) overrides it.
	StartIndexParam = "startIndex"
)

// DefaultMaxBodyBytes bounds a request body unless [WithMaxBodyBytes] says
// otherwise.
const DefaultMaxBodyBytes = 1 << 20

// maxKeyLen bounds an idempotency key, which ends up in run IDs and
// message IDs.
const maxKeyLen = 255

// httpError is a refusal with the status that says why.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) *httpError {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// writeError answers a request the handler refused before streaming,
// with a JSON body {"error": "..."}.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(mustJSON(map[string]string{"error": err.Error()}), '\n'))
}

// writeJSON answers with v.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	_, _ = w.Write(append(b, '\n'))
}

// decodeBody reads the request's JSON body into v: at most limit bytes,
// one object, no unknown fields, sent as application/json. The media type
// is required, not assumed: a page on another site can make a browser POST
// a body without one (or as text/plain) without asking the server first,
// while application/json needs a CORS preflight the handlers never grant.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		if ct == "" {
			return &httpError{http.StatusUnsupportedMediaType, "the body must be application/json, sent with Content-Type: application/json"}
		}
		return &httpError{http.StatusUnsupportedMediaType, fmt.Sprintf("the body must be application/json, not %q", ct)}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit)}
	case errors.Is(err, io.EOF):
		return badRequest("the body is empty; it must be a JSON object")
	case err != nil:
		return badRequest("the body is not the JSON expected: %v", err)
	}
	return nil
}

// idempotencyKey returns the request's idempotency key, if it has one.
func idempotencyKey(r *http.Request) (string, error) {
	key := strings.TrimSpace(r.Header.Get(IdempotencyKeyHeader))
	if len(key) > maxKeyLen {
		return "", badRequest("the %s header is longer than %d bytes", IdempotencyKeyHeader, maxKeyLen)
	}
	return key, nil
}

// cursor returns the index of the first part to send: one past the SSE
// client's Last-Event-ID if it sent one, else the startIndex parameter.
// given is false if the request names no cursor (then from is 0).
func cursor(r *http.Request) (from int64, given bool, err error) {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		last, err := parseIndex("the Last-Event-ID header", id)
		return last + 1, true, err
	}
	if v, ok := r.URL.Query()[StartIndexParam]; ok {
		from, err := parseIndex("the "+StartIndexParam+" parameter", v[0])
		return from, true, err
	}
	return 0, false, nil
}

func parseIndex(what, v string) (int64, error) {
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil || i < 0 || i == 1<<63-1 {
		return 0, badRequest("%s must be a non-negative integer, not %q", what, v)
	}
	return i, nil
}
