package engine

import (
	"fmt"

	"github.com/lambdaworkflow/workflow/world"
)

// A patch is a change to a workflow's code that runs in flight must not
// see: the code asks Patched(id) and keeps the old branch for a run that
// passed this point before the change. The answer is recorded as a
// patch_marker event when it is true and new; false is never recorded,
// since an old run's log is exactly a log without the marker. Neither
// answer issues an op, so the correlation IDs of later calls are those an
// old log holds.
//
// The decision, made once per run and patch ID:
//   - the log records a marker for the ID (anywhere: the marker is written
//     after the call that decided it): true;
//   - else, if the call is made while replaying and recorded events are
//     still ahead, the original execution went past this point without
//     asking: false (the old code);
//   - else the run reaches this point for the first time, on code that has
//     the patch: true, and a marker is buffered. It is lazy: it goes in the
//     same append as the next durable write.

type patchMarkerPayload struct {
	Patch string `json:"patch"`
}

// Patched reports whether the run takes the patched branch of change id.
func (c *Ctx) Patched(id string) bool {
	inv := c.inv
	inv.guardIssue()
	if taken, ok := inv.patches[id]; ok {
		return taken
	}
	recorded := inv.replay.recordedPatches[id]
	taken := recorded || inv.replay.ahead == 0
	inv.patches[id] = taken
	if taken && !recorded {
		inv.bufferEvent(world.PatchMarker, "", patchMarkerPayload{Patch: id})
	}
	return taken
}

// DeprecatePatch is Patched for a change whose old branch is gone: runs
// keep recording the marker (so code that still asks Patched, after a
// rollback, takes the new branch for them too), and a run that passed this
// point before the change, which needs the old branch, fails replay with a
// Nondeterminism naming the patch instead of drifting silently.
func (c *Ctx) DeprecatePatch(id, callSite string) {
	if c.Patched(id) {
		return
	}
	inv := c.inv
	inv.fatal = &Nondeterminism{
		RunID: inv.run.ID, Slot: inv.lastSlot.Load() + 1,
		Expected: fmt.Sprintf("the old branch of patch %q (the run passed this point before the patch)", id),
		Found:    "retired the patch with DeprecatePatch at " + callSite,
	}
	c.Block(func() bool { return false }) // the run is failed; this coroutine never runs on
}

// expectRecorded prepares the replay of a loaded log: it notes the patch
// markers the log holds, which Patched consults before it reaches them.
// A marker that does not decode fails the run when it is applied.
func (inv *invocation) expectRecorded(events []world.Event) {
	for _, ev := range events {
		if ev.Type != world.PatchMarker {
			continue
		}
		if p, err := decodePayload[patchMarkerPayload](ev); err == nil {
			inv.replay.recordedPatches[p.Patch] = true
		}
	}
}
