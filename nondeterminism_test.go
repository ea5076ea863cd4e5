package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// driftTo, when set, is the durable call the drifter workflow makes before
// anything else: the code changed under a waiting run.
var driftTo atomic.Value

var driftStep = workflow.DefineStep("test.drift-step", func(ctx context.Context, n int) (int, error) { return n, nil })

var driftChild = workflow.Define("test.drift-child", func(ctx workflow.Context, n int) (int, error) { return n, nil })

var drifter = workflow.Define("test.drifter", func(ctx workflow.Context, _ struct{}) (int, error) {
	// Each call sits on the line its marker comment names, which the test
	// finds in this file.
	switch driftTo.Load() {
	case "Step.Call":
		_, _ = driftStep.Call(ctx, 1) // drift:Step.Call
	case "Step.Go":
		driftStep.Go(ctx, 1) // drift:Step.Go
	case "StartChild":
		driftChild.StartChild(ctx, 1) // drift:StartChild
	case "After":
		workflow.After(ctx, time.Second) // drift:After
	case "Sleep":
		workflow.Sleep(ctx, time.Second) // drift:Sleep
	}
	return workflow.CreateHook[int](ctx, workflow.WithToken("drifter")).Receive(ctx)
})

// A NondeterminismError names the file and line of the user's call that
// disagrees with the log, for every kind of durable call.
func TestNondeterminismNamesTheUsersLine(t *testing.T) {
	for _, kind := range []string{"Step.Call", "Step.Go", "StartChild", "After", "Sleep"} {
		t.Run(kind, func(t *testing.T) {
			env := workflowtest.New(t)
			driftTo.Store("")
			run := workflowtest.Start(env, drifter, struct{}{})
			env.RunUntilIdle()
			driftTo.Store(kind)
			defer driftTo.Store("")
			if err := workflow.ResumeHook(context.Background(), env.Client, "drifter", 1); err != nil {
				t.Fatal(err)
			}
			_, err := run.Result()
			var nd *workflow.NondeterminismError
			if !errors.As(err, &nd) {
				t.Fatalf("err = %v, want a NondeterminismError", err)
			}
			if want := markedLine(t, "drift:"+kind); !strings.HasSuffix(nd.Found, want) {
				t.Errorf("Found = %q, want the call's site %s", nd.Found, want)
			}
		})
	}
}

// markedLine returns "nondeterminism_test.go:N" for the line of this file
// that ends with the comment // marker.
func markedLine(t *testing.T, marker string) string {
	t.Helper()
	src, err := os.ReadFile("nondeterminism_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(src), "\n") {
		if strings.HasSuffix(line, "// "+marker) {
			return fmt.Sprintf("nondeterminism_test.go:%d", i+1)
		}
	}
	t.Fatalf("no line marked %q", marker)
	return ""
}
