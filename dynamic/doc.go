// Package dynamic starts runs whose orchestration is Starlark source given
// at run time, over steps the binary already defines: workflows assembled
// after deployment, from reviewed templates or for experiments, after the
// Workflow SDK's [dynamic workflows]. It is experimental and off unless
// turned on (below).
//
//	run, err := dynamic.Start[Receipt](ctx, client, `
//	def workflow(input):
//	    user = steps.fetch_user(input["user_id"])
//	    steps.send_email(user["email"])
//	    return {"ok": True}
//	`, dynamic.Steps{"fetch_user": FetchUser, "send_email": SendEmail}, input)
//
// Only the orchestration is dynamic: a source calls the steps it is given,
// by alias, and cannot define one. Values cross into a step and back as
// JSON, decoded into the step's Go input type and encoded from its output.
// Importing the package is what lets a binary run such code; programs that
// do not import it never link the interpreter.
//
// # Why Starlark
//
// Go has no eval. [Starlark] (go.starlark.net) is a Python dialect built
// to be embedded: it has no clock, no randomness and no I/O unless the host
// binds them, its dicts iterate in insertion order, it forbids recursion,
// and it counts its execution steps, so the same source given the same
// results makes the same calls (what replay needs) and a runaway loop can
// be stopped.
//
// # What a source can use
//
// A source defines workflow(input), called with the run's input; what it
// returns is the run's result. Beyond Starlark's built-ins (and json) it
// sees only these bindings; each durable one is recorded in the run's log
// and replays like its Go counterpart:
//
//	steps.alias(x) or steps.alias(k=v, ...)  call a step and wait for its result
//	spawn(steps.alias, x)                    start a step; returns a future
//	spawn(fn, args...)                       run a function of the source as a branch beside the rest
//	join([f, ...])                           wait for every future, results in order
//	first([f_or_hook, ...])                  (index, value) of the first ready one
//	sleep("15m"), timer("1d")                durable sleep; a timer is a future
//	hook(token=..., metadata=...)            a hook: h.token, h.receive()
//	now(), random(), uuid()                  the run's deterministic time and random source
//	attributes(), set_attributes(k="v")      the run's attributes
//	write(value, namespace="")               append a value to the run's stream
//
// A failed step fails the run (Starlark has no exceptions); its error stays
// in the run error's chain. print goes to the worker's log.
//
// # Turning it on
//
// WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS=1 (or true) turns it on for a
// process; [workflow.WorkerOptions].DynamicWorkflows for a worker, and
// [WithEnabled] for a start. Off, Start refuses, and a run that reaches a
// worker fails rather than execute its code.
//
// Start refuses, before anything is written, a start the deployment could
// not run: off, a source over its size limit, a syntax error or an
// undefined name (each naming its line: workflow.star:3:5), no
// workflow function, a load statement, an alias bound to no registered
// step, or a steps.alias the map does not hold.
//
// # Storage and replay
//
// The source, its SHA-256 and the alias-to-step map are stored in the
// run's input, in its first event (run_created): every replay runs the
// code the run started with, whatever the deployment or the caller holds
// by then, and the hash is checked before each execution. The run's
// workflow name is dynamic/ and a hash of the source and its step map, so
// runs of one definition list together and no source can run under a
// compiled workflow's name. workflow inspect and the viewer show a dynamic
// run's source.
//
// # Limits
//
// A run may make [DefaultMaxSteps] step calls ([WithMaxSteps]) and compute
// [DefaultMaxExecutionSteps] Starlark steps between two durable calls
// ([WithMaxExecutionSteps]), so that a loop without durable calls fails its
// run instead of holding a worker; the source may be [DefaultMaxSourceBytes]
// long ([WithMaxSourceBytes]). The limits are stored with the run.
//
// # Security
//
// Dynamic source is code, and it runs with the worker's privileges. The
// interpreter is a determinism sandbox: a source can reach nothing but its
// bindings (no files, network, environment or other steps than those it
// was given). But whoever can start a dynamic run chooses which of the
// binary's steps it gets, and with which inputs, so anyone who can start
// one can do whatever those steps can do with the worker's credentials.
//
//   - Only start source you would merge: written or reviewed by someone you
//     trust with the deployment. Never build it from end-user input or from
//     a model's output.
//   - Turning it on is a deployment decision: a worker that has it on
//     executes the stored code of every dynamic run it receives.
//   - Write access to the World's storage becomes code execution: the code
//     is read back from the run's log, so whoever can write the log (the
//     DynamoDB table, the embedded World's directory) can make every
//     enabled worker run code of their choosing, over any step an alias in
//     that log names. The hash detects corruption, not an attacker, who
//     can rewrite both. A sealed log closes this: give the workers and the
//     starters a payload codec that encrypts (package codec,
//     workflow.WithPayloadCodec). The source is then stored encrypted and
//     authenticated under the run's key, a source altered in storage fails
//     to decrypt, and a worker whose codec encrypts refuses to execute a
//     dynamic run stored in the clear ([ErrUnsealed]), which anyone with
//     write access could have made. (So turn encryption on when no plain
//     dynamic run is in flight: those fail at their next execution.)
//     Without one, guard the storage as you guard the deployment.
//   - The step map and the workflow name are readable by anyone who can
//     read the run.
//
// [dynamic workflows]: https://useworkflow.dev/docs/advanced/dynamic-workflows
// [Starlark]: https://github.com/google/starlark-go/blob/master/doc/spec.md
package dynamic
