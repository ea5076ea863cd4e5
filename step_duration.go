package workflow

import "github.com/lambdaworkflow/workflow/internal/engine"

// A step's duration meets an invocation's time limit (a Lambda
// function's timeout, or [WorkerOptions.MaxInvocation]) in three ways:
//
//   - a step that declares its duration ([WithTimeout]) starts only in an
//     invocation with that much time left; otherwise the run is handed to
//     a fresh invocation first, and the step starts there;
//   - a step that declares more than any invocation allows goes to the
//     worker's [WorkerOptions.LongStepQueue], served by a Worker without
//     a time limit, or, where none is set, fails at once with
//     [ErrStepTooLong];
//   - an attempt still running when its invocation ended (it ran out of
//     time, crashed, or was stopped by the platform) counts as a failed
//     attempt, with [ErrAttemptInterrupted], under the step's retry
//     policy: no step is delivered again for ever.
//
// A Worker outside Lambda has no time limit unless given one, so it can
// serve the steps no Lambda invocation fits: see docs/AWS.md.

// ErrStepTooLong is the cause of a step that declares ([WithTimeout]) a
// longer duration than any invocation of its worker allows, where the
// worker has no [WorkerOptions.LongStepQueue]. Split the step into
// shorter ones, or set that queue and serve it with a Worker without a
// time limit.
var ErrStepTooLong = engine.ErrStepTooLong

// ErrAttemptInterrupted is the cause of a step attempt whose invocation
// ended before the attempt reported: it crashed, ran out of time or was
// stopped by the platform. It counts as a failed attempt.
var ErrAttemptInterrupted = engine.ErrInterrupted
