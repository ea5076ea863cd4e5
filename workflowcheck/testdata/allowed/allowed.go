// Package allowed holds the workflow-safe forms of everything package
// rules breaks, and code outside workflows that may do anything: the
// analyzer must report none of it.
package allowed

import (
	"context"
	"maps"
	"math/rand"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// fetch is step code: I/O, time and goroutines belong here.
func fetch(ctx context.Context, url string) (string, error) {
	start := time.Now()
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+os.Getenv("SUFFIX"), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	return time.Since(start).String(), nil
}

var Fetch = workflow.DefineStep("fetch", fetch)

// Inline step code, in a literal, is not checked either.
var Stamp = workflow.DefineStep("stamp", func(context.Context, struct{}) (time.Time, error) {
	time.Sleep(time.Millisecond)
	return time.Now(), nil
})

var Safe = workflow.Define("safe", func(ctx workflow.Context, m map[string]string) (string, error) {
	now := workflow.Now(ctx)
	deadline := now.Add(time.Hour).Truncate(time.Minute) // time values and durations are pure
	_ = time.Unix(0, 0).Before(deadline)
	workflow.Sleep(ctx, time.Second)
	timer := workflow.After(ctx, time.Minute)
	page := Fetch.Go(ctx, "https://example.com")
	if workflow.Select(ctx, page, timer) == 1 {
		return "timed out", nil
	}
	body, err := page.Get(ctx)
	if err != nil {
		return "", err
	}
	stamped, err := Stamp.Call(ctx, struct{}{})
	if err != nil {
		return "", err
	}
	_ = stamped
	sum := workflow.Go(ctx, func(ctx workflow.Context) (int, error) { return workflow.RandomN(ctx, 6), nil })
	if _, err := sum.Get(ctx); err != nil {
		return "", err
	}
	_ = workflow.Random(ctx) + rand.New(rand.NewSource(42)).Float64() // a seeded source replays
	for _, k := range slices.Sorted(maps.Keys(m)) {
		body += k + "=" + m[k]
	}
	for range m { // counting is deterministic
		body += "."
	}
	copied := maps.Collect(maps.All(m))
	_ = len(copied)
	_ = net.ParseIP("127.0.0.1")
	_ = http.StatusText(http.StatusOK)
	var missing error
	_ = os.IsNotExist(missing)
	return body + workflow.UUID(ctx), nil
})

// Main is not workflow code: it may read the clock and the environment.
func Main() {
	fmt := time.Now().Format(time.RFC3339)
	_ = fmt + os.Getenv("HOME")
	go func() {}()
}

// helperOfStep is called only from step code.
func helperOfStep() time.Time { return time.Now() }

var Helped = workflow.DefineStep("helped", func(context.Context, int) (time.Time, error) { return helperOfStep(), nil })
