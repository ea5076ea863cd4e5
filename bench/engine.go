package bench

import (
	"context"
	"errors"
	"iter"
	"time"
)

// Engine is what the suite measures: this SDK on one World, or a peer
// library. Each start method begins a run of one of the suite's workflows
// under the given ID and returns a function that waits for its result. The
// engine's steps and workflow code record their marks into Samples with
// RunStep, MarkJoin, MarkAwaiting and ReplayRecording, so that every engine
// is timed by the same clocks in the same process.
type Engine interface {
	// Sequential runs steps steps one after the other, each doing work:
	// the five-step workflow and the 1,020-step run.
	Sequential(ctx context.Context, id string, steps int, work time.Duration) (Wait, error)
	// FanOut starts branches one-step branches together, joins them, and
	// calls MarkJoin in the code after the join.
	FanOut(ctx context.Context, id string, branches int, work time.Duration) (Wait, error)
	// Resumable waits resumes times for a resume, each followed by one
	// step whose payload index is the resume's number (1-based).
	Resumable(ctx context.Context, id string, resumes int, work time.Duration) (Wait, error)
	// AwaitSuspended returns once run id waits for its i-th resume.
	AwaitSuspended(ctx context.Context, id string, i int) error
	// Resume delivers run id's i-th resume and returns once it is durably
	// recorded.
	Resume(ctx context.Context, id string, i int) error
	// Stream starts a run whose one step replays in to a stream of the run
	// with ReplayRecording, and reads that stream here as a client
	// would. An engine without a comparable stream returns
	// ErrNoStream.
	Stream(ctx context.Context, id string, in StreamInput) (iter.Seq2[Chunk, error], Wait, error)
	// StreamAPI says which API Stream writes and reads with.
	StreamAPI() string
}

// Wait waits for a run's result.
type Wait func(ctx context.Context) error

// ErrNoStream is Engine.Stream's error for an engine that has no stream a
// client can read while the run writes it.
var ErrNoStream = errors.New("no stream API comparable to a run's readable stream")

// Subject is an engine the suite can run: one of this SDK's Worlds or a
// peer library.
type Subject struct {
	Name        string
	Description string
	// Peer marks another library, which this SDK's Worlds are compared
	// with.
	Peer bool
	// FullLongRun keeps the long run's steps in quick mode on a World that
	// counts its calls, where they are capped (Config.SlowLongSteps).
	FullLongRun bool
	// Targets are the goals checked on this subject (nil: Targets, the
	// embedded World's).
	Targets []Target
	// Open returns a fresh engine with an empty store and a function that
	// releases it and whatever it stored. It fails with a reason when the
	// engine is unavailable here.
	Open func(ctx context.Context) (Engine, func(), error)
}

// RunStep is every engine's benchmark step: it records its first line, does
// its simulated work, records its last line and returns 1 KB.
func RunStep(runID string, in Payload) Payload {
	Samples.Mark(runID, startKey(in.Index))
	if in.Work > 0 {
		time.Sleep(time.Duration(in.Work))
	}
	out := Payload{Index: in.Index, Work: in.Work, Pad: in.Pad}
	Samples.Mark(runID, endKey(in.Index))
	return out
}

// MarkJoin records that the code after a fan-out's join ran. Call it only
// when that code runs for the first time, not on a replay.
func MarkJoin(runID string) { Samples.Mark(runID, joinKey) }

// MarkAwaiting records that run id is about to wait for its i-th resume,
// for engines whose client cannot ask whether a run waits (see
// AwaitMarked).
func MarkAwaiting(runID string, i int) { Samples.Mark(runID, awaitKey(i)) }

// AwaitMarked is Engine.AwaitSuspended for engines that call
// MarkAwaiting. The suite idles a second on every wait before it resumes,
// so the run has blocked by then.
func AwaitMarked(ctx context.Context, runID string, i int) error {
	_, err := Samples.Wait(ctx, runID, awaitKey(i))
	return err
}
