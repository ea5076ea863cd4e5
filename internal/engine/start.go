package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
)

// NewRun describes a run to start.
type NewRun struct {
	ID         string
	Workflow   string
	Input      json.RawMessage
	Attributes map[string]string
	Parent     *parentRef
	// Limit, if set, is the limit the run starts under (world.Limiter).
	Limit *world.Limit
	// Codec decides the run's payload scheme (nil: a plain run).
	Codec *codec.Chain
}

// startRun creates a run and queues it. If the run exists already it is
// queued again (the first start may have died before queueing) and the
// error matches world.ErrRunExists.
func startRun(ctx context.Context, w world.World, nr NewRun, now time.Time) (err error) {
	ctx, span := startRunSpan(ctx, nr)
	defer func() { EndSpan(span, err) }()
	created := runCreatedPayload{
		Workflow: nr.Workflow, Input: nr.Input, Attributes: nr.Attributes, Parent: nr.Parent, Trace: traceParent(ctx),
	}
	if nr.Limit != nil {
		created.Limit = &limitRef{Key: nr.Limit.Key}
	}
	first := world.Event{Type: world.RunCreated, CreatedAt: now, Payload: mustJSON(created)}
	run := world.Run{ID: nr.ID, Workflow: nr.Workflow, Status: world.StatusPending, Input: nr.Input,
		Attributes: nr.Attributes, CreatedAt: now, UpdatedAt: now}
	if nr.Codec != nil {
		if run, first, err = sealNewRun(ctx, nr.Codec, run, first); err != nil {
			return err
		}
	}
	msg := world.Message{RunID: nr.ID, DedupKey: nr.ID + "/start", Trace: traceParent(ctx)}
	if nr.Limit != nil {
		_, err = w.StartLimited(ctx, run, []world.Event{first}, msg, *nr.Limit)
	} else {
		_, err = w.StartRun(ctx, run, []world.Event{first}, msg)
	}
	return err
}

// StartOrJoin starts a run as startRun does; a run that exists already is
// joined (and queued again) if it is of the same workflow, refused if not.
func StartOrJoin(ctx context.Context, w world.World, nr NewRun, now time.Time) error {
	err := startRun(ctx, w, nr, now)
	if !errors.Is(err, world.ErrRunExists) {
		return err
	}
	existing, err := w.GetRun(ctx, nr.ID)
	if err != nil {
		return err
	}
	if existing.Workflow != nr.Workflow {
		return fmt.Errorf("run %s exists and belongs to workflow %q, not %q", nr.ID, existing.Workflow, nr.Workflow)
	}
	return nil
}

// NewRunID is the ID a new run of workflow gets: runID if the caller chose
// one; derived from the workflow and an idempotency key, so that a retried
// start finds the run the first one made; otherwise random.
func NewRunID(workflow, runID, key string) string {
	switch {
	case runID != "":
		return runID
	case key != "":
		sum := sha256.Sum256([]byte(workflow + "\x00" + key))
		return "wrun_" + hex.EncodeToString(sum[:13])
	default:
		return "wrun_" + rand.Text()
	}
}

// CheckAttributes refuses attribute keys starting with '$': the engine
// reserves them ($deployment, $parentRunId, …).
func CheckAttributes(attrs map[string]string) error {
	for k := range attrs {
		if strings.HasPrefix(k, "$") {
			return fmt.Errorf("workflow: attribute %q: keys starting with '$' are reserved", k)
		}
	}
	return nil
}
