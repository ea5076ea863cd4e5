package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Heartbeat reports the progress of the step attempt running with ctx,
// as Temporal's activity heartbeats do
// (https://docs.temporal.io/encyclopedia/detecting-activity-failures#activity-heartbeat):
// details (any JSON-encodable value, nil for none) say how far it got. Call
// it as often as you like: only the latest details are kept, and they are
// written to the run's log at most once per throttle period (four fifths
// of the step's [WithHeartbeatTimeout], else
// [DefaultHeartbeatThrottle]), and with the attempt's failure. A retry of
// the step reads them with [HeartbeatDetails] and resumes where the
// failed attempt got to. Outside a step it does nothing.
func Heartbeat(ctx context.Context, details any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("workflow: heartbeat details: %w", err)
	}
	engine.Heartbeat(ctx, raw)
	return nil
}

// DefaultHeartbeatThrottle is the least time between two heartbeats a
// step with no heartbeat timeout writes to the log.
const DefaultHeartbeatThrottle = engine.DefaultHeartbeatThrottle

// HeartbeatDetails decodes into v the last heartbeat details an earlier
// attempt of the running step recorded, and reports whether there were
// any: a retry resumes from them instead of starting over.
func HeartbeatDetails(ctx context.Context, v any) (bool, error) {
	info, ok := engine.StepInfoFrom(ctx)
	if !ok || info.LastHeartbeat == nil {
		return false, nil
	}
	if err := json.Unmarshal(info.LastHeartbeat, v); err != nil {
		return false, fmt.Errorf("workflow: decoding heartbeat details into %T: %w", v, err)
	}
	return true, nil
}

// WithHeartbeatTimeout fails an attempt that goes d without a [Heartbeat]
// with [ErrHeartbeatTimeout] (its context is cancelled), to be retried
// under the step's policy: a hung attempt is found after d rather than
// after the step's whole timeout. (A worker that dies is found sooner
// still, whatever its steps declare: it stops renewing its run's lease.)
func WithHeartbeatTimeout(d time.Duration) StepOption {
	return func(c *stepConfig) { c.heartbeatTimeout = d }
}

// ErrHeartbeatTimeout is the cause of an attempt that sent no heartbeat
// within its step's [WithHeartbeatTimeout].
var ErrHeartbeatTimeout = engine.ErrHeartbeatTimeout
