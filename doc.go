// Package workflow is a durable-functions SDK for Go: write long-running
// processes as plain Go functions that survive crashes, restarts and
// deploys, wait for hours or days at no cost, and resume exactly where they
// were.
//
// # Steps and workflows
//
// A step is an ordinary Go function that does I/O: call an API, write a
// row, send an email. Its result is recorded in the run's event log, so
// once it has succeeded it never runs again for that run. A failing step is
// retried (three times by default, with backoff).
//
//	var Charge = workflow.DefineStep("charge", func(ctx context.Context, o Order) (Receipt, error) {
//		return payments.Charge(ctx, o.Card, o.Amount)
//	}, workflow.WithMaxRetries(5))
//
// A workflow orchestrates steps. It must be deterministic: it is re-run
// ("replayed") from the top every time the run resumes, and each step call
// returns the result recorded the first time instead of running again.
//
//	var Checkout = workflow.Define("checkout", func(ctx workflow.Context, o Order) (Receipt, error) {
//		if _, err := Reserve.Call(ctx, o); err != nil {
//			return Receipt{}, err
//		}
//		return Charge.Call(ctx, o)
//	})
//
// Both are defined once, at package level, under names that are stored in
// the log. A process that runs workflows and a process that starts them
// must link the same definitions.
//
// # Determinism
//
// In workflow code, use [Now] instead of time.Now, [Random] and [UUID]
// instead of math/rand, [Go] instead of the go statement, and [Sleep]
// instead of time.Sleep. Do I/O only in steps. If a change to the code
// makes a replay call something other than what the log recorded, the run
// fails with a [NondeterminismError] naming the log position, the recorded
// call, the call the code made, and its file and line.
//
// # Running in parallel
//
// [Step.Go] starts a step and returns a [Future]; start several, then Get
// each (or [Gather] them) to join. [Select] waits for the first of several
// futures, hooks or timers. Go runs a workflow coroutine: a helper that
// mixes steps and sleeps, run alongside others, the Go form of Promise.all.
//
//	a, b := Ship.Go(ctx, o), Mail.Go(ctx, o)
//	tracking, err := a.Get(ctx)
//	...
//	switch workflow.Select(ctx, approval, workflow.After(ctx, 24*time.Hour)) {
//	case 0: // approved in time
//	case 1: // timed out
//	}
//
// # Waiting
//
// Sleep(ctx, 72*time.Hour) ends the current invocation and schedules a
// durable timer; a worker resumes the run when it fires. A Hook waits for a
// value sent from outside the run (a person's approval, a webhook's
// payload) with ResumeHook. While a run waits it holds no goroutine and no
// memory anywhere.
//
// # Talking to a running workflow
//
// Hooks come in a ladder. A [Hook] is one-way: [ResumeHook] sends a value
// in. A [RespondingHook] is request/reply: the resumer's call returns what
// a step answers with [HookMessage.Respond], and the answer may be a
// [Stream] the caller ranges over as it is produced. Respond works only in
// a step (it does I/O). Hooks are configured with options: [WithToken]
// gives a deterministic token, [WithMetadata], [WithMinRetention] and
// [WithForceClaim] the rest.
//
//	quotes := workflow.CreateRespondingHook[Query, Quote](ctx, workflow.WithToken("quotes:"+id))
//	for msg, err := range quotes.All(ctx) {
//		...
//		_, err = answer.Call(ctx, msg) // the step calls msg.Respond(ctx, quote)
//	}
//
//	quote, err := workflow.ResumeRespondingHook[Query, Quote](ctx, client, "quotes:"+id, q)
//
// A [Webhook] is a responding hook on a public URL, served by package
// webhook's Handler in any Go HTTP server. A step can also write a run's
// live output with [Writer], which anyone reads with [ReadStream] (typed
// values) or [Run.Readable] (raw chunks and their indexes) from any index,
// tailing new chunks as they come. docs/HOOKS.md has the details.
//
// # Starting and watching runs
//
// A [Client], on a World, starts runs and reads them; a [Run] is a run
// seen from ordinary Go code:
//
//	client := workflow.NewClient(w)
//	run, err := workflow.Start(ctx, client, Checkout, order, workflow.WithIdempotencyKey(order.ID))
//	receipt, err := run.Result(ctx) // waits
//	err = run.Cancel(ctx, "customer cancelled")
//
// A [Worker], on the same World, drives the runs: workflow.NewWorker(w,
// workflow.WorkerOptions{}).Run(ctx) runs every workflow defined in the
// binary, and WorkerOptions.Registry, a [Registry] made with
// [NewRegistry], names the ones a worker runs instead. A workflow can
// start child runs with [Workflow.StartChild], which takes Start's options
// ([WithRunID], [WithIdempotencyKey], [WithLimitKey]), and await them like
// a step; it sees other runs as a [RunHandle], whose calls are durable.
//
// Every call takes the options of its family: [StartOption] (Start and
// StartChild), [StepOption], [DefineOption], [ClientOption] (NewClient
// and [ReplayRunning]), [ResumeOption], and [HookOption] or
// [WebhookOption], which the settings every hook shares ([HookSetting])
// are both, so the compiler refuses [WithToken] on a webhook.
//
// A long-lived run (an agent session, an entity that handles events for
// months) keeps its log short with [ContinueAsNew]: it returns
// workflow.ContinueAsNew(ctx, state), and a successor with a fresh log
// carries on from state. Result and Status on the first run's handle
// follow the chain to its last run. The worker warns in its log when a
// run's log reaches 80% of WorkerOptions.MaxEvents.
//
// Package dynamic (experimental, off unless turned on) starts runs from
// Starlark source given at run time instead of a compiled workflow, over
// steps the binary defines; the source is stored with the run and every
// replay runs it as started.
//
// A step may declare how long an attempt takes with [WithTimeout]. Where
// invocations have a deadline (Lambda's), an attempt starts only in an
// invocation with that much time left; otherwise the run is handed to a
// fresh invocation first, and a step longer than any invocation goes to
// the worker's [WorkerOptions.LongStepQueue], which a Worker without a
// time limit on any machine serves ([WorkerOptions.Queue]) on the same
// World, or, without one, fails at once with [ErrStepTooLong] (see
// docs/AWS.md, "The Worker outside Lambda"). An attempt cut off by its
// invocation's end counts as failed ([ErrAttemptInterrupted]). A long
// step reports its progress with [Heartbeat]; its retry resumes from
// [HeartbeatDetails].
//
// # Errors
//
// Errors keep their message, their kind and their cause chain across the
// step and run boundaries. [Fatal] marks an error that must not be
// retried; [Retryable] asks for a retry after a given delay. A step that
// fails for good reaches the workflow as a [*StepError]; a failed run's
// Result returns a [*RunFailedError], whose cause may be the package's own
// [*NondeterminismError] or [*PanicError]. Register your own sentinels and
// error types with [RegisterError] so that errors.Is and errors.As
// recognise them after the trip through the log.
//
// # Worlds
//
// A World is where runs live: world/local keeps them in a SQLite file on
// one machine with no services (the default for development and for small
// deployments), world/memory keeps them in memory (tests), and world/aws
// keeps them in DynamoDB, SQS and S3 for Lambda. The same workflow code
// runs on all of them.
//
// # Testing
//
// Package workflowtest runs workflows in-process with a clock that skips
// time, steps replaced by fakes, and the event log at hand.
package workflow
