package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 10; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 5 * time.Millisecond}, {75, 8 * time.Millisecond}, {99, 10 * time.Millisecond}, {100, 10 * time.Millisecond}, {1, time.Millisecond}} {
		if got := Percentile(s, c.p); got != c.want {
			t.Errorf("p%g = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Summarize(s); got.N != 10 || got.P75 != 8 || got.P99 != 10 {
		t.Errorf("Summarize = %+v", got)
	}
}

func TestRecordingShape(t *testing.T) {
	rec := Recording(RecordingChunks, RecordingSeconds, 1)
	if len(rec) != RecordingChunks {
		t.Fatalf("%d chunks", len(rec))
	}
	if last := rec[len(rec)-1].At; last < 52390*time.Millisecond || last > 52410*time.Millisecond {
		t.Errorf("recording ends at %v, want 52.4 s", last)
	}
	for i := 1; i < len(rec); i++ {
		if rec[i].At < rec[i-1].At {
			t.Fatalf("chunk %d goes back in time", i)
		}
	}
}

// TestSuiteSmoke runs every benchmark of the suite, tiny, on the memory
// World: it checks the harness, not the numbers (targets are reported, not
// asserted).
func TestSuiteSmoke(t *testing.T) {
	cfg := Smoke()
	spec, _ := ByName(Worlds(), "memory")
	res := Run(t.Context(), spec, cfg, t.Logf)
	if res.Skipped != "" || len(res.Notes) > 0 {
		t.Fatalf("skipped %q, notes %q", res.Skipped, res.Notes)
	}
	for _, key := range []string{"ttfs", "stso", "long_stso_1_20", "fan_first", "fan_last", "fan_join", "ttr", "crowd_1", "crowd_100", "history_ttr_10", "history_ttr_10000", "history_stso_10000", "ctt", "stream_delivery"} {
		m, ok := res.Metric(key)
		if !ok || m.Stats.N == 0 {
			t.Errorf("metric %s missing", key)
		}
	}
	if m, _ := res.Metric("ctt"); m.Stats.N != cfg.StreamChunks {
		t.Errorf("ctt has %d samples, want %d", m.Stats.N, cfg.StreamChunks)
	}
	if m, _ := res.Metric("stso"); m.Stats.N != cfg.SeqRuns*(cfg.SeqSteps-1) {
		t.Errorf("stso has %d samples, want %d", m.Stats.N, cfg.SeqRuns*(cfg.SeqSteps-1))
	}
	if len(res.Targets) == 0 {
		t.Error("no targets evaluated")
	}
}

// benchWorlds are the Worlds the Go benchmarks run on.
var benchWorlds = []string{"memory", "local", "local-fullsync"}

// startWorker opens a World with a Worker on it until the benchmark ends,
// and returns its client.
func startWorker(b *testing.B, name string) *workflow.Client {
	spec, _ := ByName(Worlds(), name)
	e, release, err := spec.Open(b.Context())
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(release)
	return e.(*sdkEngine).c
}

func runSeq(b *testing.B, c *workflow.Client, steps int) string {
	id := newRunID()
	run, err := workflow.Start(b.Context(), c, sequential, SeqInput{Steps: steps}, workflow.WithRunID(id))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := run.Result(b.Context()); err != nil {
		b.Fatal(err)
	}
	return id
}

// BenchmarkStepToStep measures one step of a long sequential run, with no
// simulated work: ns/op is the whole per-step cost (the step's 1 KB in and
// out, its durable write, resuming the workflow); stso-µs is the p50 gap
// between a step's last line and the next step's first.
func BenchmarkStepToStep(b *testing.B) {
	for _, name := range benchWorlds {
		b.Run(name, func(b *testing.B) {
			c := startWorker(b, name)
			runSeq(b, c, 20) // warm up
			var gaps []time.Duration
			b.ResetTimer()
			for left := b.N; left > 0; {
				n := min(left, 1000)
				id := runSeq(b, c, n)
				b.StopTimer()
				s := &suite{}
				g, err := s.gaps(id, 1, n)
				if err != nil {
					b.Fatal(err)
				}
				gaps = append(gaps, g...)
				Samples.Forget(id)
				b.StartTimer()
				left -= n
			}
			if len(gaps) > 0 {
				b.ReportMetric(float64(Percentile(gaps, 50))/1e3, "stso-p50-µs")
			}
		})
	}
}

// BenchmarkTimeToFirstStep measures one-step runs back to back: ns/op is a
// whole run (Start to Result); ttfs-µs is the p50 from Start to the step's
// first line.
func BenchmarkTimeToFirstStep(b *testing.B) {
	for _, name := range benchWorlds {
		b.Run(name, func(b *testing.B) {
			c := startWorker(b, name)
			runSeq(b, c, 1)
			var ttfs []time.Duration
			for b.Loop() {
				id := newRunID()
				t0 := time.Now()
				run, err := workflow.Start(b.Context(), c, sequential, SeqInput{Steps: 1}, workflow.WithRunID(id))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := run.Result(b.Context()); err != nil {
					b.Fatal(err)
				}
				first, _ := Samples.Get(id, startKey(1))
				ttfs = append(ttfs, first.Sub(t0))
				Samples.Forget(id)
			}
			b.ReportMetric(float64(Percentile(ttfs, 50))/1e3, "ttfs-p50-µs")
		})
	}
}

// boundedWorld refuses appends of more events than fit one DynamoDB
// transaction, as the AWS World does.
type boundedWorld struct {
	world.World
}

func (b boundedWorld) AppendEvents(ctx context.Context, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	if err := fitsOneTransaction(runID, events); err != nil {
		return nil, err
	}
	return b.World.AppendEvents(ctx, runID, from, events, update)
}

func (b boundedWorld) AppendLeased(ctx context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate) ([]world.Event, error) {
	if err := fitsOneTransaction(runID, events); err != nil {
		return nil, err
	}
	return b.World.AppendLeased(ctx, owner, runID, from, events, update)
}

func fitsOneTransaction(runID string, events []world.Event) error {
	if len(events) > 98 {
		return fmt.Errorf("append to run %s: %d events, at most 98 fit one transaction", runID, len(events))
	}
	return nil
}

// A fan-out wider than one append can hold still runs: the engine writes
// its creation events in several appends.
func TestWideFanOutOnABoundedWorld(t *testing.T) {
	w := boundedWorld{memory.New()}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	go workflow.NewWorker(w, workflow.WorkerOptions{Logger: quiet}).Run(ctx)
	run, err := workflow.Start(ctx, workflow.NewClient(w), fanout, FanInput{Branches: 100})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := run.Result(ctx); err != nil || n != 100 {
		t.Fatalf("fan-out of 100: %d, %v", n, err)
	}
}
