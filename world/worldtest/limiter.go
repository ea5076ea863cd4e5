package worldtest

import (
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var limiterTests = []test{
	{"SlotsThenQueue", testSlotsThenQueue},
	{"ReleasePassesTheSlotInOrder", testReleasePassesTheSlotInOrder},
	{"ReleaseSkipsAFinishedWaiter", testReleaseSkipsAFinishedWaiter},
	{"SuccessorTakesTheSlotOver", testSuccessorTakesTheSlotOver},
	{"RatePlacesStartsInWindows", testRatePlacesStartsInWindows},
}

// limited is one subtest's partition: a workflow of its own under a
// limit, runs named in an inbox so the subtest receives only their
// messages.
type limited struct {
	w     world.World
	box   inbox
	limit world.Limit
}

func newLimited(t *testing.T, w world.World, limit world.Limit) *limited {
	limit.Workflow, limit.Key = unique("wf"), unique("key")
	return &limited{w: w, box: newInbox(w), limit: limit}
}

// start starts run name under the partition's limit (with from, the run
// whose slot it takes over) and returns it as stored.
func (p *limited) start(t *testing.T, name, from string) world.Run {
	t.Helper()
	run := newRun(p.limit.Workflow)
	run.ID = p.box.msg(name).RunID
	limit := p.limit
	limit.From = from
	if from != "" {
		limit.From = p.box.msg(from).RunID
	}
	if _, err := p.w.StartLimited(testContext(t), run, []world.Event{ev(world.RunCreated, "", "")}, p.box.msg(name), limit); err != nil {
		t.Fatalf("StartLimited(%s): %v", name, err)
	}
	return p.run(t, name)
}

func (p *limited) run(t *testing.T, name string) world.Run {
	t.Helper()
	r, err := p.w.GetRun(testContext(t), p.box.msg(name).RunID)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", name, err)
	}
	return r
}

func (p *limited) release(t *testing.T, name string) {
	t.Helper()
	if err := p.w.ReleaseSlot(testContext(t), p.run(t, name), p.limit.Key); err != nil {
		t.Fatalf("ReleaseSlot(%s): %v", name, err)
	}
}

// wantStatus checks the status of each named run.
func (p *limited) wantStatus(t *testing.T, st world.RunStatus, names ...string) {
	t.Helper()
	for _, n := range names {
		if got := p.run(t, n).Status; got != st {
			t.Fatalf("run %s: status %q, want %q", n, got, st)
		}
	}
}

// receive receives the next message of the partition's runs and acks it.
func (p *limited) receive(t *testing.T) world.Delivery {
	t.Helper()
	d := p.box.mustReceive(t, time.Minute)
	p.box.ack(t, d)
	return d
}

func (p *limited) wantMessages(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if d := p.receive(t); d.RunID != p.box.msg(n).RunID {
			t.Fatalf("message for %s, want one for %s", d.RunID, n)
		}
	}
	p.box.expectNone(t, 200*time.Millisecond)
}

// A partition gives its slots to the first starts, and queues the rest
// with no message and no due time, so the stuck-run check leaves them be.
// A queued run started again stays queued and gets no message.
func testSlotsThenQueue(t *testing.T, w world.World) {
	p := newLimited(t, w, world.Limit{Concurrency: 2})
	for _, n := range []string{"a", "b", "c", "d"} {
		p.start(t, n, "")
	}
	p.wantStatus(t, world.StatusPending, "a", "b")
	p.wantStatus(t, world.StatusQueued, "c", "d")
	p.wantMessages(t, "a", "b")
	wantOverdue(t, w, p.run(t, "c").ID, time.Now().Add(24*time.Hour), false, "a queued run")
	run := p.run(t, "c")
	_, err := p.w.StartLimited(testContext(t), run, nil, p.box.msg("c"), p.limit)
	if !errors.Is(err, world.ErrRunExists) {
		t.Fatalf("StartLimited of a queued run again: %v, want ErrRunExists", err)
	}
	p.wantStatus(t, world.StatusQueued, "c")
	p.box.expectNone(t, 200*time.Millisecond)
}

// A released slot goes to the oldest queued run, which becomes pending
// with its message; releasing again changes nothing; a queued run's
// release takes it out of the queue; with nobody waiting, a release frees
// the slot for the next start.
func testReleasePassesTheSlotInOrder(t *testing.T, w world.World) {
	p := newLimited(t, w, world.Limit{Concurrency: 1})
	for _, n := range []string{"a", "b", "c", "d"} {
		p.start(t, n, "")
	}
	p.wantMessages(t, "a")
	p.release(t, "a")
	p.wantStatus(t, world.StatusPending, "b")
	p.wantStatus(t, world.StatusQueued, "c", "d")
	p.wantMessages(t, "b")
	p.release(t, "a") // a redelivered end
	p.wantStatus(t, world.StatusQueued, "c", "d")
	p.release(t, "c") // cancelled while queued
	p.release(t, "b")
	p.wantStatus(t, world.StatusPending, "d")
	p.wantMessages(t, "d")
	p.release(t, "d")
	p.start(t, "e", "")
	p.wantStatus(t, world.StatusPending, "e")
	p.wantMessages(t, "e")
}

// A queued run that finished (cancelled) before its release ran is passed
// over: the slot goes to the next one still queued.
func testReleaseSkipsAFinishedWaiter(t *testing.T, w world.World) {
	p := newLimited(t, w, world.Limit{Concurrency: 1})
	for _, n := range []string{"a", "b", "c"} {
		p.start(t, n, "")
	}
	p.wantMessages(t, "a")
	b := p.run(t, "b")
	if _, err := w.AppendEvents(testContext(t), b.ID, b.LastSlot+1, []world.Event{ev(world.RunCancelled, "", "")},
		&world.RunUpdate{Status: world.StatusCancelled}); err != nil {
		t.Fatalf("cancel b: %v", err)
	}
	p.release(t, "a")
	p.wantStatus(t, world.StatusPending, "c")
	p.wantMessages(t, "c")
	p.release(t, "b") // its own release, late: nothing left to do
	p.wantStatus(t, world.StatusPending, "c")
}

// A successor takes over the slot of the run it names, ahead of the queue
// and with the partition full; the run it took it from holds nothing.
func testSuccessorTakesTheSlotOver(t *testing.T, w world.World) {
	p := newLimited(t, w, world.Limit{Concurrency: 1})
	p.start(t, "a", "")
	p.start(t, "b", "")
	p.start(t, "a2", "a")
	p.wantStatus(t, world.StatusPending, "a2")
	p.wantStatus(t, world.StatusQueued, "b")
	p.wantMessages(t, "a", "a2")
	p.release(t, "a") // the continued run's slot went on with a2
	p.wantStatus(t, world.StatusQueued, "b")
	p.release(t, "a2")
	p.wantStatus(t, world.StatusPending, "b")
	p.wantMessages(t, "b")
}

// Under a rate of one start an hour, the first start is delivered now and
// the second at the start of the next window, and is due only then.
func testRatePlacesStartsInWindows(t *testing.T, w world.World) {
	p := newLimited(t, w, world.Limit{Rate: 1, Period: time.Hour})
	p.start(t, "a", "")
	p.start(t, "b", "")
	p.wantMessages(t, "a")
	next := time.Now().Truncate(time.Hour).Add(time.Hour)
	wantOverdue(t, w, p.run(t, "b").ID, next.Add(-time.Minute), false, "a start held back to the next window")
	wantOverdue(t, w, p.run(t, "b").ID, next.Add(time.Minute), true, "a start held back to the next window, once it opened")
}
