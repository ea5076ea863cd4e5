package engine

import (
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
)

// The surface of dynamic runs: what package dynamic, and
// internal/dynsource (the stored form of its code), use of the engine, and
// nothing more; TestDynamicSurface keeps this list and their code equal.
// What only they use is declared in this file.
//
//   - to start a run: NewRun, NewRunID, StartOrJoin, CheckAttributes;
//   - to run its code: RegisterDynamic, DynamicEnv, DynamicFromEnv, and a
//     workflow's durable calls, Ctx, Op, HookOptions, StepDef and Global
//     (the registry that holds its steps);
//   - to name and show it: DynamicPrefix, IsDynamic, IsSealed.

// DynamicPrefix starts the workflow name of every dynamic run: a run whose
// workflow code is stored with it (package dynamic) rather than compiled
// into the binary. The rest of the name is derived from that code, so a
// caller can neither claim a compiled workflow's name nor another
// definition's.
const DynamicPrefix = "dynamic/"

// DynamicEnv is the variable that turns dynamic workflows on for a
// process, where it starts runs and where it executes them.
const DynamicEnv = "WORKFLOW_EXPERIMENTAL_DYNAMIC_WORKFLOWS"

// IsDynamic says whether a workflow name is a dynamic run's.
func IsDynamic(workflow string) bool { return strings.HasPrefix(workflow, DynamicPrefix) }

// dynamicRunner runs every dynamic workflow; nil unless a package linked
// into the binary registered one.
var dynamicRunner atomic.Pointer[WorkflowDef]

// RegisterDynamic installs the function that runs dynamic workflows, each
// from the code its run's input carries. Package dynamic calls it at init,
// so only binaries that import it can run such code.
func RegisterDynamic(fn WorkflowFunc) {
	dynamicRunner.Store(&WorkflowDef{Name: DynamicPrefix, Fn: fn})
}

// DynamicFromEnv reports whether DynamicEnv turns dynamic workflows on:
// "1" or "true" in any case. It is read each time, where it is needed.
func DynamicFromEnv() bool {
	v := os.Getenv(DynamicEnv)
	return v == "1" || strings.EqualFold(v, "true")
}

// DynamicWorkflows reports whether the engine running the workflow may
// execute code stored with a run.
func (c *Ctx) DynamicWorkflows() bool { return c.inv.e.DynamicWorkflows || DynamicFromEnv() }

// UnsealedCode reports whether the run's stored code must not run: this
// engine encrypts the runs it starts, and this run's payloads are not
// encrypted, so anyone with write access to the storage could have written
// them, past the codec.
func (c *Ctx) UnsealedCode() bool {
	return c.inv.e.Codec.Encrypts() && (c.inv.seal == nil || !c.inv.seal.Encrypted())
}

// DecodeError revives an error a step or child recorded, with the types
// the root package's codec knows.
func (c *Ctx) DecodeError(raw json.RawMessage) error { return c.inv.e.Errors.Decode(raw) }

// IsSealed says whether a run's stored input or output is encoded by its
// payload codec (so only a reader with the chain can show it).
func IsSealed(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v[sealedKey] != nil
}
