package workflow

// Patched reports whether this run takes the new branch of a change to the
// workflow's code, named by changeID, so that runs already in flight when
// the change is deployed keep the code they started on:
//
//	if workflow.Patched(ctx, "fraud-check") {
//		if err := fraudCheck.Call(ctx, order); err != nil { ... }
//	}
//	ship.Call(ctx, order)
//
// It is true for a new run, and for a run in flight that reaches this point
// for the first time after the change was deployed; it is false when a run
// that passed this point before the change is replayed: that run recorded
// the old branch's calls, and must make them again. The answer is the same
// on every replay (a true one is recorded in the run's log, with the next
// durable write) and for every call with the same changeID within a run.
// Patched is not a durable call of its own: code that adds it does not
// disturb the calls an old run's log records after it.
//
// Retire a change once no run needs the old branch: replace Patched and
// the old branch with [DeprecatePatch]; once you will not roll back to
// code that asks Patched, remove DeprecatePatch too (a recorded marker
// that no code asks about is ignored). [ReplayRunning], the deploy gate,
// tells you whether a run still needs the old branch.
func Patched(ctx Context, changeID string) bool {
	return ctx.engine().Patched(changeID)
}

// DeprecatePatch marks the point where [Patched] once asked about
// changeID, after the old branch was deleted: new runs still record the
// change (so a rollback to code that asks Patched takes the new branch for
// them), and a run that passed this point before the change, which would
// need the deleted branch, fails with a [*NondeterminismError] naming the
// change instead of taking the new branch unnoticed. Replaying the running
// runs against code with DeprecatePatch (see [ReplayRunning]) finds those
// runs before a deploy.
func DeprecatePatch(ctx Context, changeID string) {
	ctx.engine().DeprecatePatch(changeID, callSite())
}
