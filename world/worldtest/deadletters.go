package worldtest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// DeadLetters holds a World that implements world.DeadLetters to its
// rules. The World must be fresh (its dead letters are the test's alone)
// and dead-letter a message after at most ten deliveries that were
// released instead of acknowledged. Two messages are made dead letters;
// a redrive that selects one moves only that one, its delivery carries no
// DedupKey, and a redrive of all moves the other and then nothing more.
func DeadLetters(t *testing.T, w world.World) {
	dl, ok := w.(world.DeadLetters)
	if !ok {
		t.Fatalf("%T does not implement world.DeadLetters", w)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	sent := now().Add(-time.Second)
	a, b := unique("dead-a"), unique("dead-b")
	for _, id := range []string{a, b} {
		if err := w.Enqueue(ctx, world.Message{RunID: id, DedupKey: id + "/wake"}); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
	}
	letters := FailUntilDead(ctx, t, w, 2)
	runs := []string{letters[0].RunID, letters[1].RunID}
	slices.Sort(runs)
	if want := sortedPair(a, b); !slices.Equal(runs, want) {
		t.Fatalf("dead letters of runs %v, want %v", runs, want)
	}
	for _, d := range letters {
		if d.ID == "" || d.Receives < 1 || d.SentAt.Before(sent) || d.SentAt.After(now().Add(time.Second)) {
			t.Errorf("dead letter %+v: want an ID, a receive and the time it was sent (after %v)", d, sent)
		}
	}

	moved, err := dl.Redrive(ctx, func(d world.DeadLetter) bool { return d.RunID == a })
	if err != nil || moved != 1 {
		t.Fatalf("Redrive of run %s: moved %d, %v; want 1", a, moved, err)
	}
	expectDeadRuns(ctx, t, dl, b)
	receiveRedriven(ctx, t, w, a)

	if moved, err := dl.Redrive(ctx, nil); err != nil || moved != 1 {
		t.Fatalf("Redrive of all: moved %d, %v; want 1", moved, err)
	}
	expectDeadRuns(ctx, t, dl)
	receiveRedriven(ctx, t, w, b)
	if moved, err := dl.Redrive(ctx, nil); err != nil || moved != 0 {
		t.Fatalf("Redrive of an empty dead-letter queue: moved %d, %v; want 0", moved, err)
	}
}

func sortedPair(a, b string) []string {
	s := []string{a, b}
	slices.Sort(s)
	return s
}

// FailUntilDead fails the deliveries of the messages on w's queue
// (receives and releases each) until want dead letters are listed, and
// returns them: a test's way to make the messages it queued dead letters.
// w's queue must dead-letter a message after at most ten deliveries.
func FailUntilDead(ctx context.Context, t testing.TB, w world.World, want int) []world.DeadLetter {
	t.Helper()
	dl, ok := w.(world.DeadLetters)
	if !ok {
		t.Fatalf("%T does not implement world.DeadLetters", w)
	}
	for range 10 * want {
		receive, cancel := context.WithTimeout(ctx, 3*time.Second)
		d, err := w.Receive(receive, time.Second)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
		case err != nil:
			t.Fatalf("Receive: %v", err)
		default:
			if err := w.Release(ctx, d); err != nil {
				t.Fatalf("Release: %v", err)
			}
			continue
		}
		letters, err := dl.ListDeadLetters(ctx, 0)
		if err != nil {
			t.Fatalf("ListDeadLetters: %v", err)
		}
		if len(letters) >= want {
			return letters
		}
	}
	t.Fatalf("no %d dead letters after %d failed deliveries", want, 10*want)
	return nil
}

func expectDeadRuns(ctx context.Context, t *testing.T, dl world.DeadLetters, runs ...string) {
	t.Helper()
	letters, err := dl.ListDeadLetters(ctx, 0)
	if err != nil {
		t.Fatalf("ListDeadLetters: %v", err)
	}
	var got []string
	for _, d := range letters {
		got = append(got, d.RunID)
	}
	if !slices.Equal(got, runs) {
		t.Fatalf("dead letters of runs %v, want %v", got, runs)
	}
}

// receiveRedriven receives the redriven message of runID and acknowledges
// it; the queue must hold nothing else.
func receiveRedriven(ctx context.Context, t *testing.T, w world.World, runID string) {
	t.Helper()
	receive, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := w.Receive(receive, 30*time.Second)
	if err != nil || d.RunID != runID || d.DedupKey != "" {
		t.Fatalf("Receive after a redrive: %+v, %v; want run %s's message without its DedupKey", d.Message, err, runID)
	}
	if err := w.Ack(ctx, d); err != nil {
		t.Fatalf("Ack: %v", err)
	}
}
