package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/lambdaworkflow/workflow/world"
)

// ContinueAsNew is what a workflow returns to end its run and start its
// successor, a run of the same workflow with Input and a fresh log.
type ContinueAsNew struct {
	Input json.RawMessage
}

func (c *ContinueAsNew) Error() string { return "workflow: the run continues as new" }

// runContinuedPayload is what run_continued records: the successor's ID
// and input, written before the successor exists, so that whoever finds
// the run ended (the finishing invocation, or a redelivery after it died)
// creates the same successor.
type runContinuedPayload struct {
	Successor string          `json:"successor"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// generationMark separates a chain's first run ID from the generation of
// its later runs.
const generationMark = "~g"

// successorID is the run ID of the run that continues runID: the chain's
// first ID and the next generation, r, r~g2, r~g3, ... Deterministic, so
// that creating the successor again finds the one created before.
func successorID(runID string) string {
	base, gen := runID, 1
	if i := strings.LastIndex(runID, generationMark); i >= 0 {
		if n, err := strconv.Atoi(runID[i+len(generationMark):]); err == nil && n > 1 {
			base, gen = runID[:i], n
		}
	}
	return base + generationMark + strconv.Itoa(gen+1)
}

// continuation is the successor's input if the workflow returned
// ContinueAsNew (and the engine did not fail the run first).
func (inv *invocation) continuation() *ContinueAsNew {
	var can *ContinueAsNew
	if inv.fatal == nil && errors.As(inv.failure, &can) {
		return can
	}
	return nil
}

// bufferContinued buffers the run's end by continuation: the successor's
// ID goes into the terminal event and the run's Output.
func (inv *invocation) bufferContinued(can *ContinueAsNew) {
	next := successorID(inv.run.ID)
	inv.bufferEvent(world.RunContinued, "", runContinuedPayload{Successor: next, Input: can.Input})
	inv.out.merge(world.RunUpdate{Status: world.StatusContinued, Output: mustJSON(next)})
}

// startSuccessor creates the successor a continued run names. It runs
// after the end is written and again on every later delivery for the run,
// so a crash between the two is repaired by the redelivery; startRun finds
// a successor created before and queues it again. events, if given, is the
// run's whole log; otherwise the live invocation's continuation is used.
//
// The successor keeps the run's workflow and attributes, but not its
// deployment pin: it pins on its own first execution. A child's successor
// takes over the report to the parent, and the slot of the run's limit.
func (inv *invocation) startSuccessor(run world.Run, events []world.Event, held holdings) error {
	next := runContinuedPayload{Successor: successorID(run.ID)}
	if can := inv.continuation(); events == nil && can != nil {
		next.Input = can.Input
	} else {
		p, err := continuedIn(run.ID, events)
		if err != nil {
			return err
		}
		next = p
	}
	attrs := make(map[string]string, len(run.Attributes))
	for k, v := range run.Attributes {
		if k != AttrDeployment && k != attrCodec { // the successor gets a scheme (and key) of its own
			attrs[k] = v
		}
	}
	err := startRun(inv.ctx, inv.e.World, NewRun{ID: next.Successor, Workflow: run.Workflow, Input: next.Input, Attributes: attrs,
		Parent: held.parent, Limit: inv.e.successorLimit(run, held.limit), Codec: inv.e.Codec}, inv.e.now())
	if errors.Is(err, world.ErrRunExists) {
		return nil
	}
	return err
}

// continuedIn finds what run_continued recorded in a continued run's log.
func continuedIn(runID string, events []world.Event) (runContinuedPayload, error) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == world.RunContinued {
			return decodePayload[runContinuedPayload](events[i])
		}
	}
	return runContinuedPayload{}, fmt.Errorf("run %s is continued, but its log has no %s event", runID, world.RunContinued)
}

// Latest follows a run's chain of continuations from runID to its latest
// run. While a continued run's successor is still being created it
// returns the continued run: the caller waits as for a run in progress.
func Latest(ctx context.Context, w world.Store, runID string) (world.Run, error) {
	run, err := w.GetRun(ctx, runID)
	for err == nil && run.Status == world.StatusContinued {
		var next string
		if err := json.Unmarshal(run.Output, &next); err != nil || next == "" {
			return run, fmt.Errorf("run %s is continued, but names no successor: %q", run.ID, run.Output)
		}
		successor, serr := w.GetRun(ctx, next)
		if errors.Is(serr, world.ErrRunNotFound) {
			return run, nil
		}
		run, err = successor, serr
	}
	return run, err
}

// historyCeiling is the share of MaxEvents at which a run's log is
// reported as nearly full, in tenths: early enough to continue as new.
const historyCeiling = 8

// noteCeiling warns, once, when the log reaches the ceiling: applied live
// by the invocation that wrote (or absorbed) the event at that slot.
func (inv *invocation) noteCeiling(slot int64) {
	limit := inv.e.maxEvents()
	if inv.replay.active || slot != int64(max(limit*historyCeiling/10, 1)) {
		return
	}
	inv.logAt(slog.LevelWarn, "workflow: run's log nears its event limit; end it with workflow.ContinueAsNew to carry its state into a run with a fresh log",
		logEvents, slot, logMaxEvents, limit)
}
