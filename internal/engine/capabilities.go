package engine

import (
	"context"

	"github.com/lambdaworkflow/workflow/world"
)

// capabilities are the optional interfaces of a World (world.Notifier,
// world.RunReader, ...), found here and nowhere else in the engine: the
// rest of it asks for a capability by its field, nil when the World lacks
// it, and keeps its fallback beside the question. What every World does
// is world.World, asked for directly.
type capabilities struct {
	notifier  world.Notifier       // nil: the live loop polls for others' events
	runReader world.RunReader      // nil: a run is read before its lease, its log after
	inbox     world.Inbox          // nil: resumes append to the log at once
	expirer   world.Expirer        // nil: the World deletes expired runs itself, or keeps them
	unsynced  world.UnsyncedReader // the World's, or its ordinary reads, which wait for nothing
	maxAppend int                  // world.AppendLimiter's, or defaultMaxAppend
}

// defaultMaxAppend is the most events one append writes on a World that
// does not say (world.AppendLimiter). Worlds bound an atomic append, and a
// wide fan-out buffers three events per branch (its creation, start and
// result, when its step ends before the buffer's lazy flush), so a
// 64-branch join takes two appends at this bound; the AWS World packs
// events to take it in one.
const defaultMaxAppend = 98

// capabilitiesOf finds w's optional interfaces. A nil w (an engine that
// only replays) has none.
func capabilitiesOf(w world.World) *capabilities {
	c := &capabilities{maxAppend: defaultMaxAppend}
	c.notifier, _ = w.(world.Notifier)
	c.runReader, _ = w.(world.RunReader)
	c.inbox, _ = w.(world.Inbox)
	c.expirer, _ = w.(world.Expirer)
	c.unsynced = ordinaryReads{w}
	if u, ok := w.(world.UnsyncedReader); ok {
		c.unsynced = u
	}
	if l, ok := w.(world.AppendLimiter); ok {
		c.maxAppend = l.MaxAppend()
	}
	return c
}

// caps returns the capabilities of the engine's World, found on first use:
// the engine is built as a struct literal, and its World never changes.
func (e *Engine) caps() *capabilities {
	e.capsOnce.Do(func() { e.capabilities = capabilitiesOf(e.World) })
	return e.capabilities
}

// ordinaryReads are the unsynced reads of a World that holds no read back
// (it is no world.UnsyncedReader): its ordinary ones.
type ordinaryReads struct{ world.World }

func (r ordinaryReads) GetRunUnsynced(ctx context.Context, id string) (world.Run, error) {
	return r.GetRun(ctx, id)
}

func (r ordinaryReads) ReadStreamUnsynced(ctx context.Context, name string, from int64) ([][]byte, bool, error) {
	return r.ReadStream(ctx, name, from)
}
