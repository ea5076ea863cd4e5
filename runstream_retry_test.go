package workflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// lateFirstAttempt delays the stream write of a step's first attempt,
// the way a loaded machine may run its writer goroutine late.
type lateFirstAttempt struct{ *memory.World }

func (w lateFirstAttempt) WriteStream(ctx context.Context, name string, chunks [][]byte) error {
	if len(chunks) > 0 && string(chunks[0]) == "1" {
		time.Sleep(200 * time.Millisecond)
	}
	return w.World.WriteStream(ctx, name, chunks)
}

var writeThenFailOnce = workflow.DefineStep("streams.writeThenFailOnce", func(ctx context.Context, _ struct{}) (struct{}, error) {
	info, _ := workflow.GetStepInfo(ctx)
	w, err := workflow.Writer[int](ctx, "attempts")
	if err != nil {
		return struct{}{}, err
	}
	if err := w.Write(info.Attempt); err != nil {
		return struct{}{}, err
	}
	if info.Attempt == 1 {
		return struct{}{}, errors.New("the first attempt fails")
	}
	return struct{}{}, nil
}, workflow.WithBackoff(func(int) time.Duration { return 0 }))

var retriedWriter = workflow.Define("streams.retriedWriter", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
	return writeThenFailOnce.Call(ctx, struct{}{})
})

// A failed attempt's writes are in the stream before its retry starts,
// so a reader sees the attempts in the order they ran.
func TestAFailedAttemptsWritesLandBeforeItsRetry(t *testing.T) {
	w := lateFirstAttempt{memory.New()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, workflow.NewClient(w), retriedWriter, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for chunk, err := range run.Readable(ctx, "attempts", 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(chunk.Data))
	}
	if strings.Join(got, " ") != "1 2" {
		t.Fatalf("the stream holds attempts %v", got)
	}
}
