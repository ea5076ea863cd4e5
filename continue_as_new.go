package workflow

import "github.com/lambdaworkflow/workflow/internal/engine"

// ContinueAsNew returns the error that, returned by a workflow, ends the
// run and starts its successor: a run of the same workflow with input and
// a fresh log. Use it to keep a long-lived run's log short (the engine
// warns in its log when a run nears its event limit): carry the state the
// workflow needs in input. input must be the workflow's own input type.
//
//	if workflow.Now(ctx).Sub(started) > 24*time.Hour { // or a count of events handled
//		return Summary{}, workflow.ContinueAsNew(ctx, state)
//	}
//
// The end and the successor are one step as callers see it: the
// successor's ID is recorded in the run's end before the successor is
// created, under an ID derived from the run's, so a crash in between
// creates the same successor on redelivery. The run's status is
// [StatusContinued]; [Run.Result], [Run.Status] and [Run.Cancel] on its
// handle follow the chain to its latest run, as do [RunHandle] and a
// parent's [ChildRun] (the successor reports to the parent). The successor
// keeps the run's attributes and pins to the deployment that first
// executes it.
//
// Hooks are not handed over: the run releases its tokens as any ending run
// does, and the successor creates them again (the same [WithToken] token
// is free unless the hook asked for [WithMinRetention]). A message sent to
// a token in between finds no hook.
func ContinueAsNew[I any](_ Context, input I) error {
	raw, err := marshal("ContinueAsNew input", input)
	if err != nil {
		return Fatal(err)
	}
	return &engine.ContinueAsNew{Input: raw}
}
