// Package rules breaks each rule once, in workflow code.
package rules

import (
	"context"
	crand "crypto/rand"
	"maps"
	"math/rand"
	randv2 "math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow"
)

func charge(_ context.Context, cents int) (string, error) { return "ok", nil }

// Charge is the step the workflows below must call through.
var Charge = workflow.DefineStep("charge", charge)

var Clock = workflow.Define("clock", func(ctx workflow.Context, d time.Duration) (time.Duration, error) {
	start := time.Now()           // want `time.Now in workflow code: use workflow.Now\(ctx\)`
	time.Sleep(d)                 // want `time.Sleep in workflow code: use workflow.Sleep\(ctx, d\)`
	<-time.After(d)               // want `time.After in workflow code: use workflow.After\(ctx, d\)` `channel receive in workflow code: wait on a workflow.Future`
	_ = time.Tick(d)              // want `time.Tick in workflow code: use workflow.After`
	_ = time.NewTimer(d)          // want `time.NewTimer in workflow code: use workflow.After`
	_ = time.NewTicker(d)         // want `time.NewTicker in workflow code: use workflow.After`
	_ = time.AfterFunc(d, nil)    // want `time.AfterFunc in workflow code: use workflow.After`
	_ = time.Until(start)         // want `time.Until in workflow code: use t.Sub\(workflow.Now\(ctx\)\)`
	return time.Since(start), nil // want `time.Since in workflow code: use workflow.Now\(ctx\).Sub\(t\)`
})

var Concurrency = workflow.Define("concurrency", func(ctx workflow.Context, n int) (int, error) {
	ch := make(chan int, 1)
	go func() {}() // want `go statement in workflow code: use workflow.Go\(ctx, fn\)`
	ch <- n        // want `channel send in workflow code: return the value from a workflow.Go coroutine`
	n = <-ch       // want `channel receive in workflow code: wait on a workflow.Future`
	select {       // want `select statement in workflow code: use workflow.Select\(ctx, futures...\)`
	case v := <-ch:
		n += v
	case ch <- 1:
	}
	for v := range ch { // want `channel receive in workflow code`
		n += v
	}
	var wg sync.WaitGroup
	wg.Go(func() {}) // want `sync.WaitGroup.Go in workflow code: wait on workflow.Future values`
	wg.Wait()        // want `sync.WaitGroup.Wait in workflow code: wait on workflow.Future values`
	var mu sync.Mutex
	mu.Lock() // a lock no durable call interrupts never waits
	mu.Unlock()
	return n, nil
})

var Randomness = workflow.Define("randomness", func(ctx workflow.Context, n int) (int, error) {
	a := rand.Intn(n)   // want `rand.Intn in workflow code: use workflow.Random\(ctx\), workflow.RandomN\(ctx, n\) or workflow.UUID\(ctx\)`
	b := randv2.IntN(n) // want `rand.IntN in workflow code: use workflow.Random`
	buf := make([]byte, 8)
	_, _ = crand.Read(buf) // want `rand.Read in workflow code: draw secrets in a step`
	_ = crand.Reader       // want `rand.Reader in workflow code: draw secrets in a step`
	return a + b, nil
})

var IO = workflow.Define("io", func(ctx workflow.Context, url string) (string, error) {
	region := os.Getenv("AWS_REGION")        // want `os.Getenv in workflow code: do it in a step \(workflow.DefineStep\)`
	_, _ = os.ReadFile("/etc/hostname")      // want `os.ReadFile in workflow code: do it in a step`
	_ = os.Args                              // want `os.Args in workflow code: do it in a step`
	f, _ := os.Open("x")                     // want `os.Open in workflow code`
	_ = f.Close()                            // want `os.File.Close in workflow code`
	_, _ = net.Dial("tcp", "example.com:80") // want `net.Dial in workflow code: do it in a step`
	_, _ = net.LookupHost("example.com")     // want `net.LookupHost in workflow code`
	_, _ = http.Get(url)                     // want `http.Get in workflow code: do it in a step`
	req, _ := http.NewRequest("GET", url, nil)
	_, _ = http.DefaultClient.Do(req) // want `http.DefaultClient in workflow code` `http.Client.Do in workflow code`
	return region, nil
})

var MapOrder = workflow.Define("map-order", func(ctx workflow.Context, m map[string]string) ([]string, error) {
	var keys []string
	for k := range m { // want `range over a map in workflow code visits keys in a random order: range over slices.Sorted\(maps.Keys\(m\)\)`
		keys = append(keys, k)
	}
	for _, v := range m { // want `range over a map in workflow code`
		_ = v
	}
	for k := range maps.Keys(m) { // want `maps.Keys in workflow code yields in a random order: sort it with slices.Sorted`
		keys = append(keys, k)
	}
	return slices.Collect(maps.Values(m)), nil // want `maps.Values in workflow code yields in a random order`
})

// refund is a step held in a variable: calling the variable is a direct call too.
var refund = func(_ context.Context, cents int) (string, error) { return "refunded", nil }

var Refund = workflow.DefineStep("refund", refund)

var DirectStep = workflow.Define("direct-step", func(ctx workflow.Context, cents int) (string, error) {
	_, _ = refund(context.Background(), cents) // want `refund is a step function called directly from workflow code.*call Refund.Call\(ctx, input\)`
	return charge(context.Background(), cents) // want `charge is a step function called directly from workflow code, so it runs unrecorded on every replay: call Charge.Call\(ctx, input\) or Charge.Go\(ctx, input\)`
})
