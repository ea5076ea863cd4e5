package flowtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
)

// publish writes v to the run's default stream.
var publish = workflow.DefineStep("flowtest.publish", func(ctx context.Context, v []string) (struct{}, error) {
	w, err := workflow.Writer[[]string](ctx, "")
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, w.Write(v)
})

var count = workflow.DefineStep("flowtest.count", func(ctx context.Context, r [2]int) (struct{}, error) {
	w, err := workflow.Writer[int](ctx, "numbers")
	if err != nil {
		return struct{}{}, err
	}
	for i := r[0]; i < r[1]; i++ {
		if err := w.Write(i); err != nil {
			return struct{}{}, err
		}
	}
	return struct{}{}, nil
})

// counter writes 0..5 to its stream in two steps, waits for a go-ahead,
// then writes 5..10.
var counter = workflow.Define("flowtest.counter", func(ctx workflow.Context, token string) (struct{}, error) {
	for _, r := range [][2]int{{0, 3}, {3, 5}} {
		if _, err := count.Call(ctx, r); err != nil {
			return struct{}{}, err
		}
	}
	if _, err := workflow.CreateHook[struct{}](ctx, workflow.WithToken(token)).Receive(ctx); err != nil {
		return struct{}{}, err
	}
	return count.Call(ctx, [2]int{5, 10})
})

func runStream(t *testing.T, e *env) {
	token := unique("counter")
	run := start(t, e, counter, token)
	read := func(from int64, stopAt int) string {
		var got []string
		for chunk, err := range run.Readable(e.ctx, "numbers", from) {
			if err != nil {
				t.Fatal(err)
			}
			var n int
			if err := chunk.Decode(&n); err != nil {
				t.Fatal(err)
			}
			if got = append(got, fmt.Sprintf("%d@%d", n, chunk.Index)); len(got) == stopAt {
				break
			}
		}
		return strings.Join(got, " ")
	}
	if got := read(0, 5); got != "0@0 1@1 2@2 3@3 4@4" { // tails the live run
		t.Fatalf("read %q", got)
	}
	waitForHook(t, e, token)
	if got := read(-2, 2); got != "3@3 4@4" {
		t.Fatalf("read from the tail %q", got)
	}
	if err := workflow.ResumeHook(e.ctx, e.client, token, struct{}{}); err != nil {
		t.Fatal(err)
	}
	if got := read(4, -1); got != "4@4 5@5 6@6 7@7 8@8 9@9" { // until the run ends
		t.Fatalf("read %q", got)
	}
	result(t, e, run)
}
