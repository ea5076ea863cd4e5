package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// TestReopen writes one of everything, closes the World and opens the
// directory again: everything is still there, and an unacknowledged
// message is delivered again.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	at := time.Now().Truncate(time.Millisecond)
	run := world.Run{ID: "run-1", Workflow: "wf", Status: world.StatusPending, Input: json.RawMessage(`{"n":1}`),
		Attributes: map[string]string{"team": "a"}, CreatedAt: at, UpdatedAt: at}
	first := []world.Event{{Type: world.RunCreated, Payload: json.RawMessage(`{"n":1}`), CreatedAt: at}}
	step := world.Event{Type: world.StepCreated, CorrelationID: "step-1", CreatedAt: at}
	live := world.Hook{Token: "tok-live", RunID: run.ID, CorrelationID: "hook-1", Kind: "webhook", CreatedAt: at}
	retained := world.Hook{Token: "tok-retained", RunID: run.ID, CorrelationID: "hook-2", CreatedAt: at}
	retainUntil := at.Add(time.Hour)

	w := open(t, dir)
	check(t, "CreateRun", ignore(w.CreateRun(ctx, run, first)))
	check(t, "AppendEvents", ignore(w.AppendEvents(ctx, run.ID, 2, []world.Event{step},
		&world.RunUpdate{Status: world.StatusRunning, Attributes: map[string]string{"step": "1"}})))
	check(t, "ClaimHook", ignore(w.ClaimHook(ctx, live, false)))
	check(t, "ClaimHook", ignore(w.ClaimHook(ctx, retained, false)))
	check(t, "DisposeHook", w.DisposeHook(ctx, retained.Token, run.ID, retainUntil))
	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: "taken"}))
	taken, err := w.Receive(ctx, 200*time.Millisecond)
	check(t, "Receive", err)
	check(t, "Enqueue", w.Enqueue(ctx, world.Message{RunID: "waiting", DedupKey: "k"}))
	check(t, "WriteStream", w.WriteStream(ctx, "closed", [][]byte{[]byte("a"), []byte("b")}))
	check(t, "CloseStream", w.CloseStream(ctx, "closed"))
	check(t, "WriteStream", w.WriteStream(ctx, "open", [][]byte{[]byte("c")}))
	check(t, "Close", w.Close())

	w = open(t, dir, local.WithFullSync())
	got, err := w.GetRun(ctx, run.ID)
	check(t, "GetRun", err)
	if got.Status != world.StatusRunning || got.Attributes["team"] != "a" || got.Attributes["step"] != "1" ||
		string(got.Input) != `{"n":1}` || !got.CreatedAt.Equal(at) {
		t.Errorf("run after reopen = %+v", got)
	}
	evs, err := w.Events(ctx, run.ID, 0)
	check(t, "Events", err)
	if len(evs) != 2 || evs[0].Type != world.RunCreated || evs[1].CorrelationID != "step-1" || evs[1].Slot != 2 {
		t.Errorf("events after reopen = %+v", evs)
	}
	if _, err := w.AppendEvents(ctx, run.ID, 2, []world.Event{step}, nil); !errors.Is(err, world.ErrSlotTaken) {
		t.Errorf("AppendEvents at a taken slot after reopen: err = %v, want ErrSlotTaken", err)
	}
	check(t, "AppendEvents at the next slot after reopen", ignore(w.AppendEvents(ctx, run.ID, 3, []world.Event{step}, nil)))
	if _, err := w.CreateRun(ctx, run, nil); !errors.Is(err, world.ErrRunExists) {
		t.Errorf("CreateRun after reopen: err = %v, want ErrRunExists", err)
	}
	page, err := w.ListRuns(ctx, world.RunFilter{Attributes: map[string]string{"step": "1"}})
	check(t, "ListRuns", err)
	if len(page.Runs) != 1 || page.Runs[0].ID != run.ID {
		t.Errorf("ListRuns after reopen = %+v", page.Runs)
	}

	h, err := w.GetHook(ctx, live.Token)
	check(t, "GetHook", err)
	if h.RunID != run.ID || h.CorrelationID != "hook-1" || h.Kind != "webhook" || h.Disposed {
		t.Errorf("live hook after reopen = %+v", h)
	}
	h, err = w.GetHook(ctx, retained.Token)
	check(t, "GetHook", err)
	if !h.Disposed || !h.RetainUntil.Equal(retainUntil) {
		t.Errorf("retained hook after reopen = %+v", h)
	}

	// The waiting message is due now; the taken one once its visibility
	// timeout lapses, as its second attempt.
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var got2 []world.Delivery
	for range 2 {
		d, err := w.Receive(rctx, time.Minute)
		check(t, "Receive after reopen", err)
		got2 = append(got2, d)
	}
	if got2[0].RunID != "waiting" || got2[0].Attempt != 1 || got2[0].DedupKey != "k" ||
		got2[1].RunID != "taken" || got2[1].Attempt != 2 || got2[1].Receipt != taken.Receipt {
		t.Errorf("deliveries after reopen = %+v", got2)
	}

	for _, s := range []struct {
		name   string
		chunks []string
		closed bool
	}{{"closed", []string{"a", "b"}, true}, {"open", []string{"c"}, false}} {
		chunks, closed, err := w.ReadStream(ctx, s.name, 0)
		check(t, "ReadStream", err)
		var strs []string
		for _, c := range chunks {
			strs = append(strs, string(c))
		}
		if !slices.Equal(strs, s.chunks) || closed != s.closed {
			t.Errorf("stream %s after reopen = %q, closed %v", s.name, strs, closed)
		}
	}
}

func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ignore drops the first result of a call for check.
func ignore[T any](_ T, err error) error { return err }
