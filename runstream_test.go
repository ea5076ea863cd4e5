package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world/memory"
)

type streamWrite struct {
	Namespace string   `json:"namespace"`
	Values    []string `json:"values"`
	Close     bool     `json:"close"`
}

var writeStream = workflow.DefineStep("streams.write", func(ctx context.Context, req streamWrite) (string, error) {
	w, err := workflow.Writer[string](ctx, req.Namespace)
	if err != nil {
		return "", err
	}
	for _, v := range req.Values {
		if err := w.Write(v); err != nil {
			return "", err
		}
	}
	if req.Close {
		return "", w.Close()
	}
	// A write to a closed stream fails, at the latest when flushed.
	if err := w.Flush(); errors.Is(err, workflow.ErrStreamClosed) {
		return "closed", nil
	}
	return "", err
})

var writer = workflow.Define("streams.writer", func(ctx workflow.Context, writes []streamWrite) ([]string, error) {
	var results []string
	for _, req := range writes {
		r, err := writeStream.Call(ctx, req)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
})

func readAll(t *testing.T, run *workflow.Run[[]string], namespace string, from int64) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for chunk, err := range run.Readable(ctx, namespace, from) {
		if err != nil {
			t.Fatalf("reading %q from %d: %v", namespace, from, err)
		}
		var v string
		if err := chunk.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%s", chunk.Index, v))
	}
	return strings.Join(got, " ")
}

func TestRunStreamsKeepOrderAcrossStepsAndCloseWithTheRun(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, writer, []streamWrite{
		{Namespace: "log", Values: []string{"a", "b"}},
		{Namespace: "", Values: []string{"x"}},
		{Namespace: "log", Values: []string{"c"}},
	})
	if _, err := run.Result(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"log", ""} {
		if _, closed, err := env.World.ReadStream(context.Background(), engine.RunStream(run.ID, ns), 0); err != nil || !closed {
			t.Errorf("stream %q is open after the run ended (%v)", ns, err)
		}
	}
	for _, c := range []struct {
		namespace string
		from      int64
		want      string
	}{
		{"log", 0, "0:a 1:b 2:c"},
		{"log", 1, "1:b 2:c"},
		{"log", -1, "2:c"},
		{"log", -10, "0:a 1:b 2:c"},
		{"", 0, "0:x"},
		{"nobody-wrote-this", 0, ""}, // ends with the run, not hangs
	} {
		if got := readAll(t, run.Run, c.namespace, c.from); got != c.want {
			t.Errorf("Readable(%q, %d) = %q, want %q", c.namespace, c.from, got, c.want)
		}
	}
}

func TestClosingAStreamEndsItsReadersAndRefusesLaterWrites(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, writer, []streamWrite{
		{Namespace: "done", Values: []string{"a"}, Close: true},
		{Namespace: "done", Values: []string{"late"}},
	})
	got, err := run.Result()
	if err != nil || got[1] != "closed" {
		t.Fatalf("got %q, %v", got, err)
	}
	if got := readAll(t, run.Run, "done", 0); got != "0:a" {
		t.Fatalf("read %q", got)
	}
}

func TestWriterWorksOnlyInSteps(t *testing.T) {
	if _, err := workflow.Writer[string](context.Background(), ""); !errors.Is(err, workflow.ErrNotInStep) {
		t.Fatalf("err = %v, want ErrNotInStep", err)
	}
}

var liveGate chan struct{}

var writeLive = workflow.DefineStep("streams.writeLive", func(ctx context.Context, _ struct{}) (struct{}, error) {
	w, err := workflow.Writer[string](ctx, "live")
	if err != nil {
		return struct{}{}, err
	}
	if err := w.Write("first"); err != nil {
		return struct{}{}, err
	}
	<-liveGate // released by the reader once it has "first"
	return struct{}{}, w.Write("second")
})

var live = workflow.Define("streams.live", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
	return writeLive.Call(ctx, struct{}{})
})

// A reader tails a stream while the step writes it, on a real worker,
// and stops when the run ends.
func TestReadableTailsLiveChunksUntilTheRunEnds(t *testing.T) {
	liveGate = make(chan struct{})
	w := memory.New()
	c := workflow.NewClient(w)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, c, live, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for chunk, err := range run.Readable(ctx, "live", 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(chunk.Data))
		if len(got) == 1 {
			close(liveGate)
		}
	}
	if strings.Join(got, " ") != `"first" "second"` {
		t.Fatalf("read %v", got)
	}
	if s, _ := run.Status(ctx); s != workflow.StatusCompleted {
		t.Fatalf("the reader stopped while the run is %s", s)
	}
}

type point struct{ X, Y int }

var writePoints = workflow.DefineStep("streams.writePoints", func(ctx context.Context, _ struct{}) (struct{}, error) {
	points, err := workflow.Writer[point](ctx, "points")
	if err != nil {
		return struct{}{}, err
	}
	for _, p := range []point{{1, 2}, {3, 4}} {
		if err := points.Write(p); err != nil {
			return struct{}{}, err
		}
	}
	stray, err := workflow.Writer[string](ctx, "points") // the same stream, another type
	if err != nil {
		return struct{}{}, err
	}
	if err := stray.Write("not a point"); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, points.Write(point{5, 6})
})

var pointWriter = workflow.Define("streams.points", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
	return writePoints.Call(ctx, struct{}{})
})

// ReadStream yields the writer's typed values, reports a chunk of another
// type as an error without stopping, and honours the start index.
func TestReadStreamYieldsTypedValues(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, pointWriter, struct{}{})
	if _, err := run.Result(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []point
	var errs []error
	for p, err := range workflow.ReadStream[point](ctx, run.Run, "points", 0) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, p)
	}
	if fmt.Sprint(got) != "[{1 2} {3 4} {5 6}]" || len(errs) != 1 || !strings.Contains(errs[0].Error(), "chunk 2") {
		t.Fatalf("read %v, errors %v; want three points and one error at chunk 2", got, errs)
	}
	var last []point
	for p, err := range workflow.ReadStream[point](ctx, run.Run, "points", -1) {
		if err != nil {
			t.Fatal(err)
		}
		last = append(last, p)
	}
	if fmt.Sprint(last) != "[{5 6}]" {
		t.Fatalf("from -1: %v", last)
	}
}
