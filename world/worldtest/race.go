package worldtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var raceTests = []test{
	{"AppendSameSlot", testRaceAppendSameSlot},
	{"AppendOwnRuns", testRaceAppendOwnRuns},
	{"ClaimHook", testRaceClaimHook},
	{"ReceiveOneMessage", testRaceReceiveOneMessage},
	{"ReceiveMany", testRaceReceiveMany},
	{"StreamWriters", testStreamWriters},
}

// racers is how many goroutines contend in each race.
const racers = 8

func testRaceAppendSameSlot(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	var (
		mu     sync.Mutex
		won    []world.Event
		missed = map[int][]world.Event{}
	)
	race(racers, func(i int) {
		e := ev(world.StepCreated, fmt.Sprint("step-", i), fmt.Sprintf(`{"racer":%d}`, i))
		m, err := w.AppendEvents(testContext(t), run.ID, 2, []world.Event{e}, nil)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			won = append(won, e)
		case errors.Is(err, world.ErrSlotTaken):
			missed[i] = m
		default:
			t.Errorf("racer %d: AppendEvents: %v", i, err)
		}
	})
	if len(won) != 1 {
		t.Fatalf("%d racers won slot 2, want exactly 1", len(won))
	}
	for _, m := range missed {
		checkEvents(t, m, run.ID, 2, won)
	}
	checkEvents(t, mustEvents(t, w, run.ID, 1), run.ID, 2, won)
}

func testRaceAppendOwnRuns(t *testing.T, w world.World) {
	const appends = 20
	runs := make([]world.Run, racers)
	for i := range runs {
		runs[i] = createRun(t, w, newRun(unique("wf")))
	}
	written := make([][]world.Event, racers)
	race(racers, func(i int) {
		for slot := int64(1); slot <= appends; slot++ {
			e := ev(world.StepCreated, fmt.Sprint(slot), "")
			if _, err := w.AppendEvents(testContext(t), runs[i].ID, slot, []world.Event{e}, nil); err != nil {
				t.Errorf("run %d, slot %d: AppendEvents: %v", i, slot, err)
				return
			}
			written[i] = append(written[i], e)
		}
	})
	for i, r := range runs {
		checkEvents(t, mustEvents(t, w, r.ID, 0), r.ID, 1, written[i])
	}
}

func testRaceClaimHook(t *testing.T, w world.World) {
	token := unique("tok")
	var (
		mu      sync.Mutex
		winners []world.Hook
		holders []world.Hook
	)
	race(racers, func(i int) {
		h := newHook(token, unique("run"), "hook-1")
		holder, err := w.ClaimHook(testContext(t), h, false)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			winners = append(winners, h)
		case errors.Is(err, world.ErrHookConflict):
			holders = append(holders, holder)
		default:
			t.Errorf("racer %d: ClaimHook: %v", i, err)
		}
	})
	if len(winners) != 1 {
		t.Fatalf("%d racers claimed the token, want exactly 1", len(winners))
	}
	for _, h := range holders {
		checkHook(t, "the holder a losing racer was told of", h, winners[0])
	}
	checkHook(t, "GetHook after the race", mustGetHook(t, w, token), winners[0])
}

func testRaceReceiveOneMessage(t *testing.T, w world.World) {
	b := newInbox(w)
	b.enqueue(t, b.msg("1"))
	ctx, cancel := context.WithTimeout(testContext(t), 300*time.Millisecond)
	defer cancel()
	var (
		mu  sync.Mutex
		got []world.Delivery
	)
	race(racers, func(int) {
		for {
			d, err := b.receive(ctx, time.Minute)
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, d)
			mu.Unlock()
		}
	})
	if len(got) != 1 {
		t.Fatalf("one message was delivered %d times within its visibility timeout: %+v", len(got), got)
	}
	b.ack(t, got[0])
}

func testRaceReceiveMany(t *testing.T, w world.World) {
	const messages = 40
	b := newInbox(w)
	for i := range messages {
		b.enqueue(t, b.msg(fmt.Sprint(i)))
	}
	ctx, cancel := context.WithTimeout(testContext(t), 5*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		received = map[string]int{}
		total    atomic.Int32
	)
	race(racers, func(int) {
		for {
			d, err := b.receive(ctx, time.Minute)
			if err != nil {
				return
			}
			mu.Lock()
			received[d.RunID]++
			mu.Unlock()
			if err := w.Ack(ctx, d); err != nil {
				t.Errorf("Ack: %v", err)
			}
			if total.Add(1) == messages {
				cancel()
			}
		}
	})
	if len(received) != messages {
		t.Errorf("%d of %d messages were delivered", len(received), messages)
	}
	for id, n := range received {
		if n != 1 {
			t.Errorf("message %s was delivered %d times", id, n)
		}
	}
}

// testStreamWriters has several writers append to one stream at once: every
// chunk arrives once, each writer's in the order it wrote them.
func testStreamWriters(t *testing.T, w world.World) {
	const writers, writes = 4, 25
	name := unique("stream")
	race(writers, func(i int) {
		for j := range writes {
			chunks := [][]byte{fmt.Appendf(nil, "%d/%d/a", i, j), fmt.Appendf(nil, "%d/%d/b", i, j)}
			if err := w.WriteStream(testContext(t), name, chunks); err != nil {
				t.Errorf("WriteStream: %v", err)
				return
			}
		}
	})
	got, _ := read(t, w, name, 0)
	if len(got) != writers*writes*2 {
		t.Fatalf("stream has %d chunks, want %d", len(got), writers*writes*2)
	}
	next := make([]int, writers) // index of each writer's next chunk
	for _, c := range got {
		var i, j int
		var part string
		if _, err := fmt.Sscanf(c, "%d/%d/%s", &i, &j, &part); err != nil || i < 0 || i >= writers {
			t.Fatalf("unexpected chunk %q", c)
		}
		if want := fmt.Sprintf("%d/%d/%s", i, next[i]/2, []string{"a", "b"}[next[i]%2]); c != want {
			t.Fatalf("writer %d's chunk %q came where %q was due", i, c, want)
		}
		next[i]++
	}
}
