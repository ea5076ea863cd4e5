package local

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// doneCounter is a live context that counts the calls of its Done. Given
// a context whose Done is not nil, database/sql and the driver each start
// a goroutine per statement to watch it, and each asks for Done first.
type doneCounter struct {
	context.Context
	calls atomic.Int64
}

func (c *doneCounter) Done() <-chan struct{} {
	c.calls.Add(1)
	return c.Context.Done()
}

// TestReadsWatchNoContext calls every read of the reader pool, each with a
// live context, and checks that none hands that context on: no read
// starts a goroutine to watch it (readContext).
func TestReadsWatchNoContext(t *testing.T) {
	w, err := Open(t.TempDir())
	check(t, "Open", err)
	defer w.Close()
	bg := t.Context()
	now := time.Now()
	_, err = w.CreateRun(bg, world.Run{ID: "r", Workflow: "wf", Status: world.StatusRunning, CreatedAt: now, UpdatedAt: now},
		[]world.Event{{Type: world.RunCreated, CreatedAt: now}})
	check(t, "CreateRun", err)
	check(t, "WriteStream", w.WriteStream(bg, "s", [][]byte{[]byte("chunk")}))
	_, err = w.ClaimHook(bg, world.Hook{Token: "t", RunID: "r", CorrelationID: "h", CreatedAt: now}, false)
	check(t, "ClaimHook", err)

	reads := map[string]func(ctx context.Context) error{
		"GetRun":        func(ctx context.Context) error { return ignore(w.GetRun(ctx, "r")) },
		"Events":        func(ctx context.Context) error { return ignore(w.Events(ctx, "r", 0)) },
		"Events, empty": func(ctx context.Context) error { return ignore(w.Events(ctx, "r", 1)) },
		"ListRuns":      func(ctx context.Context) error { return ignore(w.ListRuns(ctx, world.RunFilter{})) },
		"GetHook":       func(ctx context.Context) error { return ignore(w.GetHook(ctx, "t")) },
		"OverdueRuns":   func(ctx context.Context) error { return ignore(w.OverdueRuns(ctx, now.Add(time.Hour), now, 10)) },
		"ReadStream": func(ctx context.Context) error {
			_, _, err := w.ReadStream(ctx, "s", 0)
			return err
		},
		"WaitStream": func(ctx context.Context) error { return w.WaitStream(ctx, "s", 0) },
		"WaitEvents": func(ctx context.Context) error {
			w.slots.reset() // so that the wait asks the database
			return w.WaitEvents(ctx, "r", 0)
		},
	}
	for name, read := range reads {
		ctx := &doneCounter{Context: bg}
		check(t, name, read(ctx))
		if n := ctx.calls.Load(); n != 0 {
			t.Errorf("%s asked its context for Done %d times: a statement watches it with a goroutine of its own", name, n)
		}
	}
}
