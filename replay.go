package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Replay checks that the workflow code in this binary still reproduces a
// recorded run, the way a worker replays a run before carrying it on, and
// stops there: no step runs and nothing is written. log is the run's event
// log as JSON: an array of the events its World stores, in slot order, as
// workflow inspect run ID --json prints it.
//
// It returns nil if the code makes the durable calls the log records, in
// the same order (and, for a run that completed, returns where the log
// says it did); a [*NondeterminismError] naming the first event the code no
// longer reproduces; or another error for a log that no longer decodes, a
// workflow this binary does not define, or workflow code that panics.
//
// Keep the logs of real runs and replay them in a test (see
// workflowtest.Replay): a change that would break the runs in flight then
// fails before it is deployed.
func Replay(ctx context.Context, log []byte) error {
	var events []world.Event
	if err := json.Unmarshal(log, &events); err != nil {
		return fmt.Errorf("workflow: replay: decoding the event log: %w", err)
	}
	return replayEvents(ctx, engine.Global, events)
}

// replayEvents replays a run's log against the workflows of registry.
func replayEvents(ctx context.Context, registry *engine.Registry, events []world.Event) error {
	e := &engine.Engine{Registry: registry, Errors: errorModel}
	err := e.Replay(ctx, events)
	if nd, ok := errors.AsType[*engine.Nondeterminism](err); ok {
		return (*NondeterminismError)(nd)
	}
	return err
}
