package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// An invocation that loses a slot to another writer (a duplicate
// invocation, say) applies what that writer recorded, drops from its own
// buffer what it would record twice, and writes the rest after it.
func TestLosingASlotDropsWhatTheOtherWriterRecorded(t *testing.T) {
	started1 := event(world.StepStarted, "1", stepStartedPayload{Attempt: 1})
	started2 := event(world.StepStarted, "1", stepStartedPayload{Attempt: 2})
	retrying1 := event(world.StepRetrying, "1", stepFailedPayload{Attempt: 1, Error: mustJSON("e"), RetryAt: time.Now()})
	for _, c := range []struct {
		name string
		// before is what the log held when our invocation replayed it,
		// after the run's creation; other is what the other writer
		// appended while our step ran.
		before, other []world.Event
		want          []string
		output        string
	}{{
		name:  "it recorded the whole step: ours is dropped, its result wins",
		other: []world.Event{event(world.RunStarted, "", nil), stepCreated("1"), started1, completed("1", "theirs")},
		want: []string{"run_created", "run_started", "step_created/1", `step_started/1 {"attempt":1}`,
			`step_completed/1 {"output":"theirs"}`},
		output: `"theirs"`,
	}, {
		name:  "it recorded the start only: our result follows it",
		other: []world.Event{event(world.RunStarted, "", nil), stepCreated("1"), started1},
		want: []string{"run_created", "run_started", "step_created/1", `step_started/1 {"attempt":1}`,
			`step_completed/1 {"output":"ours"}`},
		output: `"ours"`,
	}, {
		name:   "it ran the same attempt: the attempt's start is not written twice",
		before: []world.Event{event(world.RunStarted, "", nil), stepCreated("1"), started1, retrying1},
		other:  []world.Event{started2},
		want: []string{"run_created", "run_started", "step_created/1", `step_started/1 {"attempt":1}`,
			`step_retrying/1 ` + string(retrying1.Payload), `step_started/1 {"attempt":2}`, `step_completed/1 {"output":"ours"}`},
		output: `"ours"`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			w := newMemoryWorld(t)
			e := newTestEngine(w, awaitStep(returning("ours")))
			startTestRun(t, w)
			if len(c.before) > 0 { // an earlier invocation's, which started the run
				appendEvents(t, w, 2, &world.RunUpdate{Status: world.StatusRunning}, c.before...)
			}
			inv := replayed(t, e)
			runOurStep(t, inv)
			appendEvents(t, w, inv.lastSlot.Load()+1, nil, c.other...)
			if err := inv.flush(); err != nil {
				t.Fatal(err)
			}
			if got := logOf(t, w); !slices.Equal(got, c.want) {
				t.Errorf("log:\n%q\nwant\n%q", got, c.want)
			}
			if inv.lastSlot.Load() != int64(len(c.want)) || len(inv.out.pending) != 0 || inv.out.update != nil {
				t.Errorf("after the flush: last slot %d, %d events and update %v still buffered", inv.lastSlot.Load(), len(inv.out.pending), inv.out.update)
			}
			if !inv.finished || string(inv.output) != c.output {
				t.Errorf("workflow finished %v with %s, want %s", inv.finished, inv.output, c.output)
			}
			if run, _ := w.GetRun(t.Context(), testRunID); run.Status != world.StatusRunning {
				t.Errorf("run is %s: the run's update was lost", run.Status)
			}
		})
	}
}

// runOurStep materializes the workflow's step, runs it and buffers its
// result, as the live loop does, without writing anything.
func runOurStep(t *testing.T, inv *invocation) {
	t.Helper()
	if err := inv.materialize(); err != nil {
		t.Fatal(err)
	}
	if inv.live.running != 1 {
		t.Fatalf("%d steps launched, want 1; buffered: %v", inv.live.running, inv.out.pending)
	}
	r := <-inv.live.results
	inv.live.running--
	inv.recordStepResult(r)
}

func TestEventKeysTellFactsApart(t *testing.T) {
	same := [][2]world.Event{
		{event(world.StepStarted, "1", stepStartedPayload{Attempt: 2}), event(world.StepStarted, "1", stepStartedPayload{Attempt: 2})},
		{completed("3", "a"), completed("3", "b")}, // one result per step, whatever it says
		{event(world.HookReceived, "2", hookReceivedPayload{ResumeID: "rs_1"}), event(world.HookReceived, "2", hookReceivedPayload{ResumeID: "rs_1", Payload: mustJSON(1)})},
	}
	for _, p := range same {
		if eventKey(p[0]) != eventKey(p[1]) {
			t.Errorf("%s and %s record one fact but have keys %q and %q", p[0].Payload, p[1].Payload, eventKey(p[0]), eventKey(p[1]))
		}
	}
	different := [][2]world.Event{
		{event(world.StepStarted, "1", stepStartedPayload{Attempt: 1}), event(world.StepStarted, "1", stepStartedPayload{Attempt: 2})},
		{event(world.StepRetrying, "1", stepFailedPayload{Attempt: 1}), event(world.StepRetrying, "1", stepFailedPayload{Attempt: 2})},
		{event(world.StepStarted, "1", stepStartedPayload{Attempt: 1}), event(world.StepStarted, "2", stepStartedPayload{Attempt: 1})},
		{event(world.HookReceived, "2", hookReceivedPayload{ResumeID: "rs_1"}), event(world.HookReceived, "2", hookReceivedPayload{ResumeID: "rs_2"})},
		{stepCreated("1"), event(world.StepStarted, "1", stepStartedPayload{Attempt: 1})},
	}
	for _, p := range different {
		if eventKey(p[0]) == eventKey(p[1]) {
			t.Errorf("%s %s and %s %s are different facts with one key %q", p[0].Type, p[0].Payload, p[1].Type, p[1].Payload, eventKey(p[0]))
		}
	}
}

func stepCreated(corr string) world.Event {
	return event(world.StepCreated, corr, stepCreatedPayload{Step: "s"})
}

func completed(corr, output string) world.Event {
	return event(world.StepCompleted, corr, stepCompletedPayload{Output: mustJSON(output)})
}
