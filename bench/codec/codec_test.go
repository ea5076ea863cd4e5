// Package codec measures what payload codecs save and cost a step: bytes
// the World stores and DynamoDB write units per step, plain, compressed
// and compressed and encrypted, on a recorded agent's token stream and on
// the benchmark suite's 1 KB JSON, and the time per step.
//
//	go -C bench test -run '^$' -bench . ./codec/
package codec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// steps is how many steps a measured run takes, each taking the payload
// in and returning it.
const steps = 10

var echo = workflow.DefineStep("bench.codecEcho", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })

var relay = workflow.Define("bench.codecRelay", func(ctx workflow.Context, p json.RawMessage) (int, error) {
	for range steps {
		var err error
		if p, err = echo.Call(ctx, p); err != nil {
			return 0, err
		}
	}
	return len(p), nil
})

// payloads: an agent's streamed answer as a model-call step records it
// (about 600 text deltas), and 1 KB of JSON as every benchmark step of
// https://useworkflow.dev/docs/performance takes.
func payloads() map[string]json.RawMessage {
	words := strings.Fields("the flight from Berlin to Lisbon leaves at nine and a seat by the window is held for you until noon")
	var parts []map[string]string
	for i := range 600 {
		parts = append(parts, map[string]string{"type": "text-delta", "id": "txt-0", "delta": words[i%len(words)] + " "})
	}
	tokens, _ := json.Marshal(parts)
	small, _ := json.Marshal(map[string]any{"index": 1000, "workNs": 100000000, "pad": strings.Repeat("x", 1024-42)})
	return map[string]json.RawMessage{"tokens": tokens, "json1k": small}
}

func chains(b *testing.B) map[string]*codec.Chain {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	kr, err := codec.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		b.Fatal(err)
	}
	return map[string]*codec.Chain{
		"plain":  nil,
		"zstd":   codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}}),
		"sealed": codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: kr}),
	}
}

func BenchmarkPayloadMemory(b *testing.B) {
	for pname, p := range payloads() {
		for cname, c := range chains(b) {
			b.Run(pname+"/"+cname, func(b *testing.B) { measure(b, memory.New(), c, p, nil) })
		}
	}
}

// BenchmarkPayloadAWS runs the same on the AWS World on MiniStack, and
// reports the DynamoDB write units each step costs.
func BenchmarkPayloadAWS(b *testing.B) {
	if err := emulator.Health(2 * time.Second); err != nil {
		b.Skipf("MiniStack is not running on %s: %v", emulator.Endpoint, err)
	}
	cfg := emulator.Config()
	name := "wf-bench-codec-" + strings.ToLower(rand.Text()[:10])
	opts, err := awsworld.Bootstrap(b.Context(), cfg, awsworld.Names{Table: name, Queue: name, Bucket: name})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = awsworld.Teardown(context.Background(), cfg, opts) })
	w, err := awsworld.New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	for pname, p := range payloads() {
		for cname, c := range chains(b) {
			b.Run(pname+"/"+cname, func(b *testing.B) { measure(b, w, c, p, w) })
		}
	}
}

// measure drives runs of relay to their end in this goroutine and
// reports bytes stored per step (the log's payloads and the run's input
// and output, as the World returns them), write units per step where
// units is set, and time per step.
func measure(b *testing.B, w world.World, c *codec.Chain, p json.RawMessage, units *awsworld.World) {
	ctx := b.Context()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Codec: c, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	client := workflow.NewClient(w, workflow.WithPayloadCodec(c))
	var stored int
	var wcu float64
	for b.Loop() {
		if units != nil {
			units.ResetCalls()
		}
		run, err := workflow.Start(ctx, client, relay, p)
		if err != nil {
			b.Fatal(err)
		}
		if err := worker.Process(ctx, run.ID); err != nil {
			b.Fatal(err)
		}
		if n, err := run.Result(ctx); err != nil || n != len(p) {
			b.Fatalf("run: %d, %v", n, err)
		}
		if units != nil {
			wcu += units.Units().Write
		}
		stored += storedBytes(b, w, run.ID)
		if c != nil && bytes.Contains(mustEvents(b, w, run.ID), []byte("Lisbon")) {
			b.Fatal("a run with codecs stored its payload as it is")
		}
	}
	n := float64(b.N * steps)
	b.ReportMetric(float64(len(p)), "payload-B")
	b.ReportMetric(float64(stored)/n, "stored-B/step")
	if units != nil {
		b.ReportMetric(wcu/n, "WCU/step")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/step")
}

func storedBytes(b *testing.B, w world.World, runID string) int {
	run, err := w.GetRun(b.Context(), runID)
	if err != nil {
		b.Fatal(err)
	}
	return len(mustEvents(b, w, runID)) + len(run.Input) + len(run.Output)
}

func mustEvents(b *testing.B, w world.World, runID string) []byte {
	evs, err := w.Events(b.Context(), runID, 0)
	if err != nil {
		b.Fatal(err)
	}
	var all []byte
	for _, ev := range evs {
		all = append(all, ev.Payload...)
	}
	return all
}
