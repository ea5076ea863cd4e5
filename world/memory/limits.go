package memory

import (
	"context"
	"slices"

	"github.com/lambdaworkflow/workflow/world"
)

// partitionKey names a limit's partition: a workflow and a start's key.
type partitionKey struct{ workflow, key string }

// partition is a limit's state: the runs holding a slot, the runs waiting
// for one in order, and the rate window.
type partition struct {
	held    map[string]bool
	waiting []world.Message // each waiting run's first message
	rate    world.RateWindow
}

func (w *World) partitionLocked(workflow, key string) *partition {
	k := partitionKey{workflow, key}
	p := w.limits[k]
	if p == nil {
		p = &partition{held: map[string]bool{}}
		if w.limits == nil {
			w.limits = map[partitionKey]*partition{}
		}
		w.limits[k] = p
	}
	return p
}

// StartLimited implements world.Limiter under the World's lock: the run,
// its slot or queue place, and its message are one change.
func (w *World) StartLimited(_ context.Context, run world.Run, first []world.Event, msg world.Message, limit world.Limit) (world.Run, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rs, ok := w.runs[run.ID]; ok {
		if st := rs.run.Status; !st.Terminal() && st != world.StatusQueued {
			w.enqueueLocked(msg)
		}
		return w.createRunLocked(run, first) // ErrRunExists
	}
	p := w.partitionLocked(limit.Workflow, limit.Key)
	admitted := limit.From != "" && p.held[limit.From]
	if admitted {
		delete(p.held, limit.From)
	} else {
		p.rate, msg.DeliverAt = limit.PlaceStart(p.rate, w.clock.Now())
		admitted = len(p.waiting) == 0 && limit.Admits(len(p.held))
	}
	if !admitted {
		run.Status = world.StatusQueued
	}
	created, err := w.createRunLocked(run, first)
	if err != nil {
		return created, err
	}
	rs := w.runs[run.ID]
	if !admitted {
		rs.due = dueState{}
		p.waiting = append(p.waiting, msg)
		return created, nil
	}
	p.held[run.ID] = true
	rs.due = dueState{at: world.DueAt(msg.DeliverAt, rs.due.at)}
	w.enqueueLocked(msg)
	return created, nil
}

// ReleaseSlot implements world.Limiter.
func (w *World) ReleaseSlot(_ context.Context, run world.Run, key string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.limits[partitionKey{run.Workflow, key}]
	if p == nil {
		return nil
	}
	if i := slices.IndexFunc(p.waiting, func(m world.Message) bool { return m.RunID == run.ID }); i >= 0 {
		p.waiting = slices.Delete(p.waiting, i, i+1)
		return nil
	}
	if !p.held[run.ID] {
		return nil
	}
	delete(p.held, run.ID)
	for len(p.waiting) > 0 {
		next := p.waiting[0]
		p.waiting = p.waiting[1:]
		rs := w.runs[next.RunID]
		if rs == nil || rs.run.Status != world.StatusQueued {
			continue // gone or cancelled while it waited
		}
		p.held[next.RunID] = true
		rs.run.Status = world.StatusPending
		rs.run.UpdatedAt = w.clock.Now()
		rs.due = dueState{at: world.DueAt(next.DeliverAt, rs.run.UpdatedAt)}
		w.enqueueLocked(next)
		return nil
	}
	return nil
}
