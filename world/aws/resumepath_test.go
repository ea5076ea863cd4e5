package aws

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// wakeSpy is the AWS World whose second hook read (the resume's check
// after the inbox put) waits until the wake-up is being sent, or gives up
// after a while: a resume that sent its wake-up only after the check
// would see its check fail.
type wakeSpy struct {
	*World
	hookReads atomic.Int64
	sending   chan struct{}
	once      sync.Once
}

func (w *wakeSpy) GetHook(ctx context.Context, token string) (world.Hook, error) {
	if w.hookReads.Add(1) == 2 {
		select {
		case <-w.sending:
		case <-time.After(10 * time.Second):
			return world.Hook{}, errors.New("the hook's check waited for the wake-up, which was not being sent")
		}
	}
	return w.World.GetHook(ctx, token)
}

func (w *wakeSpy) Enqueue(ctx context.Context, msg world.Message) error {
	w.once.Do(func() { close(w.sending) })
	return w.World.Enqueue(ctx, msg)
}

// A resume is the hook's read, the run's read, the inbox put, then the
// wake-up and the hook's check at once: three round trips after the run's
// read, not four. The check here is held until the wake-up is on its
// way, so a resume that checked before it sent would fail.
func TestResumeWakesWhileCheckingTheHook(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	run, token := suspendedWaiter(t, ctx, w, "aws-test-wake:")
	spy := &wakeSpy{World: w, sending: make(chan struct{})}
	w.ResetCalls()
	if err := workflow.ResumeHook(ctx, workflow.NewClient(spy), token, "go"); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"DynamoDB.GetItem": 2, "DynamoDB.Query": 1, "DynamoDB.PutItem": 1, "SQS.SendMessage": 1}
	if got := w.Calls(); !maps.Equal(got, want) {
		t.Errorf("a resume made %v, want %v", got, want)
	}
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	if got, err := run.Result(ctx); err != nil || got != "go" {
		t.Fatalf("got %q, %v; want the message", got, err)
	}
}

// foldSpy is the AWS World noting the calls made when the first fold is
// written.
type foldSpy struct {
	*World
	atFold map[string]int64
}

func (w *foldSpy) AppendFolded(ctx context.Context, owner, runID string, from int64, events []world.Event, update *world.RunUpdate, folded []string) ([]world.Event, error) {
	if w.atFold == nil {
		w.atFold = w.Calls()
	}
	return w.World.AppendFolded(ctx, owner, runID, from, events, update, folded)
}

// The invocation a resume wakes folds the message its run's read found in
// the inbox: the read, the lease and the fold, with no read of the inbox
// between.
func TestFoldUsesTheRunsRead(t *testing.T) {
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	run, token := suspendedWaiter(t, ctx, w, "aws-test-fold:")
	if err := workflow.ResumeHook(ctx, workflow.NewClient(w), token, "go"); err != nil {
		t.Fatal(err)
	}
	spy := &foldSpy{World: w}
	w.ResetCalls()
	if err := workflow.NewWorker(spy, workflow.WorkerOptions{}).Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("AWS calls of the resumed invocation: %v, %v of them before the fold", w.Calls(), spy.atFold)
	want := map[string]int64{"DynamoDB.Query": 1, "DynamoDB.UpdateItem": 1}
	if !maps.Equal(spy.atFold, want) {
		t.Errorf("calls before the fold %v, want %v: the run's read, with its inbox, and the lease", spy.atFold, want)
	}
	if got, err := run.Result(ctx); err != nil || got != "go" {
		t.Fatalf("got %q, %v; want the message", got, err)
	}
}
