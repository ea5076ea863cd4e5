package local_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

func TestOneQueueConsumerPerDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := local.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _ = first.Receive(ctx, time.Minute) // claims the queue
	second, err := local.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_, err = second.Receive(context.Background(), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "one worker per directory") {
		t.Fatalf("a second consumer got %v, want a clear refusal", err)
	}
}

func TestWritesFromAnotherWorldWakeWaiters(t *testing.T) {
	dir := t.TempDir()
	waiter, err := local.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	writer, err := local.Open(dir) // stands for another process, e.g. the CLI
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	ctx := context.Background()
	if _, err := writer.CreateRun(ctx, world.Run{ID: "r", Workflow: "w", Status: world.StatusRunning}, []world.Event{{Type: world.RunCreated}}); err != nil {
		t.Fatal(err)
	}
	woke := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		woke <- waiter.WaitEvents(ctx, "r", 1)
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := writer.AppendEvents(ctx, "r", 2, []world.Event{{Type: world.RunCancelled}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-woke; err != nil {
		t.Fatalf("the waiter never saw the other World's append: %v", err)
	}
}
