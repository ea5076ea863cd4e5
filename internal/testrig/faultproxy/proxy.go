// Package faultproxy is an HTTP proxy for tests that sits between the AWS
// SDK clients of a worker process and the local emulator. It counts the
// worker's write calls, can kill the worker right after its Nth write
// (before or after the answer reaches it), injects throttling and server
// errors into a share of the calls for a while, holds each call for a
// modelled latency (latency.go) and times the calls (timing.go).
//
// It listens on 127.0.0.1 only and stops when its context ends, so a test
// that starts it with t.Context() cannot leak it.
package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// When says when a kill lands relative to the answer of the write it
// follows. Either way the emulator has carried the write out.
type When int

const (
	// AfterAnswer passes the answer on, then kills: the worker may have
	// read it, and may have acted on it.
	AfterAnswer When = iota
	// BeforeAnswer kills before passing the answer on: the worker never
	// learns that its write took effect.
	BeforeAnswer
)

func (w When) String() string {
	if w == BeforeAnswer {
		return "before its answer"
	}
	return "after its answer"
}

// Proxy forwards requests to one upstream endpoint. It is safe for
// concurrent use.
type Proxy struct {
	target   string
	url      string
	upstream *http.Client
	tunnel   *httputil.ReverseProxy // WebSockets, which pass unheld
	srv      *http.Server

	faults atomic.Int64 // faults answered, numbering their request IDs

	mu      sync.Mutex
	seen    int64  // write calls received, numbering them
	writes  []Call // write calls forwarded and answered, in order of answer
	kill    *killRule
	down    bool // a kill fired: nothing passes until Resume
	storms  []storm
	latency Latency

	timing timing
}

type killRule struct {
	after int64
	when  When
	do    func()
}

// Start listens on a free port of 127.0.0.1 and forwards to target
// ("http://127.0.0.1:4566") until ctx ends or Close is called.
func Start(ctx context.Context, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{
		target: target,
		url:    "http://" + ln.Addr().String(),
		// No environment proxy, no redirects: answers pass through as sent.
		upstream: &http.Client{
			Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	to, err := url.Parse(target)
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("faultproxy: target %q: %w", target, err)
	}
	p.tunnel = httputil.NewSingleHostReverseProxy(to) // keeps the Host header
	p.tunnel.Transport = &http.Transport{}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = p.Close() })
	return p, nil
}

// URL is the endpoint to give the SDK (AWS_ENDPOINT_URL).
func (p *Proxy) URL() string { return p.url }

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() error {
	p.upstream.CloseIdleConnections()
	return p.srv.Close()
}

// Writes returns the write calls forwarded and answered so far, in order.
func (p *Proxy) Writes() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.writes...)
}

// Faults returns how many calls the storms have faulted.
func (p *Proxy) Faults() int64 { return p.faults.Load() }

// KillAfter calls kill once, when the emulator has answered the nth write
// call counted from now (1-based), before or after passing that answer on.
// kill is meant to SIGKILL the process whose write it was. From then on
// the proxy drops every request, so that the emulator holds exactly what
// the process wrote up to its kill (calls already forwarded still
// complete, as they would on AWS), until Resume.
func (p *Proxy) KillAfter(n int, when When, kill func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kill = &killRule{after: p.seen + int64(n), when: when, do: kill}
}

// Resume lets requests through again after a kill, for the process
// started in place of the one killed, and drops a kill that has not fired.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.kill = false, nil
}

// Inject starts a storm now.
func (p *Proxy) Inject(s Storm) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.storms = append(p.storms, storm{Storm: s, until: time.Now().Add(s.For)})
}

func (p *Proxy) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		p.tunnel.ServeHTTP(rw, r) // an AppSync Events subscriber's: passed as it is
		return
	}
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	call := classify(r, body)
	modelled := p.latencyOf(call)
	until := arrived.Add(modelled)
	if p.isDown() {
		panic(http.ErrAbortHandler) // as if the process were gone
	}
	fault, struck := p.stormAnswer(call)
	if struck && fault != LostAnswer {
		hold(r, until)
		faultResponse(rw, call, fault, p.faults.Add(1))
		return
	}
	var n int64
	if call.Write {
		p.mu.Lock()
		p.seen++
		n = p.seen
		p.mu.Unlock()
	}
	hold(r, arrived.Add(modelled/2)) // the request's half of the trip
	forwarded := time.Now()
	resp, answer, err := p.forward(r, body)
	answered := time.Now()
	p.timing.add(Timed{Call: call, Arrived: arrived, Modelled: modelled, Upstream: answered.Sub(forwarded), Answered: answered})
	if err != nil {
		// The upstream call may or may not have been carried out, as with
		// a dropped connection: the SDK retries, as it would against AWS.
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	hold(r, until)
	var kill *killRule
	if call.Write {
		kill = p.answered(call, n)
	}
	if kill != nil && kill.when == BeforeAnswer {
		kill.do()
		panic(http.ErrAbortHandler) // drop the connection, answer unsent
	}
	if struck {
		faultResponse(rw, call, ServerError, p.faults.Add(1))
	} else {
		reply(rw, resp, answer)
	}
	if kill != nil {
		if f, ok := rw.(http.Flusher); ok {
			f.Flush()
		}
		kill.do()
	}
}

// stormAnswer returns the answer of the first storm that faults call, if
// one does.
func (p *Proxy) stormAnswer(call Call) (Answer, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for _, s := range p.storms {
		if s.strikes(call, now) {
			return s.Answer, true
		}
	}
	return 0, false
}

// answered records the nth write as done and returns the kill rule it
// fires, if any; a rule fires once.
func (p *Proxy) answered(call Call, n int64) *killRule {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, call)
	if k := p.kill; k != nil && n == k.after {
		p.kill, p.down = nil, true
		return k
	}
	return nil
}

// hold waits until until, or until the caller has gone.
func hold(r *http.Request, until time.Time) {
	if d := time.Until(until); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
	}
}

func (p *Proxy) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// forward sends r to the upstream and reads its whole answer. The Host
// header is kept: it is part of the SDK's signature.
func (p *Proxy) forward(r *http.Request, body []byte) (*http.Response, []byte, error) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	resp, err := p.upstream.Do(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, errors.Join(errors.New("reading the upstream answer"), err)
	}
	return resp, answer, nil
}

func reply(rw http.ResponseWriter, resp *http.Response, body []byte) {
	for k, vs := range resp.Header {
		rw.Header()[k] = vs
	}
	rw.WriteHeader(resp.StatusCode)
	_, _ = rw.Write(body)
}
