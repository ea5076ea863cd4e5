// Package dynsource is the stored form of a dynamic workflow: what a
// dynamic run's input carries. Package dynamic writes and runs it; the CLI
// and the viewer read it without linking the Starlark interpreter.
//
// The code travels in the run's input (the run_created event and the run
// record), so it is stored, retained, deleted and encoded exactly as every
// other run input is: a World that seals payloads seals the code too.
package dynsource

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lambdaworkflow/workflow/internal/engine"
)

// Input is a dynamic run's input: its code and the input the code's
// workflow function is called with.
type Input struct {
	Source Source          `json:"source"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// Source is a dynamic workflow's definition: everything a replay needs, so
// that it never depends on what the deployment holds now.
type Source struct {
	// SHA256 is the hex SHA-256 of Code, checked before every execution.
	SHA256 string `json:"sha256"`
	Code   string `json:"code"`
	// Steps maps the aliases the code calls (steps.alias) to the names of
	// registered steps.
	Steps map[string]string `json:"steps,omitempty"`
	// MaxSteps bounds the step calls of the run.
	MaxSteps int `json:"maxSteps"`
	// MaxExecutionSteps bounds the Starlark computation between two
	// durable calls.
	MaxExecutionSteps uint64 `json:"maxExecutionSteps"`
}

// Hash is the hex SHA-256 of code.
func Hash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// WorkflowName is the workflow name of the definition's runs: derived from
// the code and its step bindings, so the same definition always groups
// under one name and a changed one (other code, or an alias bound to
// another step) gets another.
func (s Source) WorkflowName() string {
	h := sha256.New()
	h.Write([]byte(s.SHA256))
	for _, alias := range slices.Sorted(maps.Keys(s.Steps)) {
		fmt.Fprintf(h, "\x00%s=%s", alias, s.Steps[alias])
	}
	return engine.DynamicPrefix + hex.EncodeToString(h.Sum(nil))[:16]
}

// ErrSealed says a stored source is encoded by its run's payload codec.
var ErrSealed = errors.New("the stored source is sealed by the run's payload codec; reading it needs the run's key")

// Decode reads a dynamic run's input and checks that its code is the code
// it was started with.
func Decode(raw json.RawMessage) (Input, error) {
	var in Input
	if engine.IsSealed(raw) {
		return in, ErrSealed
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("dynamic workflow: decoding the stored source: %w", err)
	}
	if got := Hash(in.Source.Code); got != in.Source.SHA256 {
		return in, fmt.Errorf("dynamic workflow: the stored source hashes to %s, not to the %s it was stored under", got, in.Source.SHA256)
	}
	return in, nil
}

// Of returns the stored definition of a run of workflow whose input is
// input; ok is false for a run that is not dynamic.
func Of(workflow string, input json.RawMessage) (in Input, ok bool, err error) {
	if !engine.IsDynamic(workflow) {
		return Input{}, false, nil
	}
	in, err = Decode(input)
	return in, true, err
}

// Numbered is the code with its line numbers, as errors cite them
// (workflow.star:LINE:COL).
func (s Source) Numbered() string {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(s.Code, "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, line)
	}
	return b.String()
}

// Bindings lists the step map as alias=step, sorted.
func (s Source) Bindings() string {
	var pairs []string
	for _, alias := range slices.Sorted(maps.Keys(s.Steps)) {
		pairs = append(pairs, alias+"="+s.Steps[alias])
	}
	return strings.Join(pairs, " ")
}

// Store hashes the code and returns the workflow name and the stored
// input of a run of the definition called with input.
func (s Source) Store(input json.RawMessage) (workflow string, raw json.RawMessage) {
	s.SHA256 = Hash(s.Code)
	raw, _ = json.Marshal(Input{Source: s, Input: input}) // strings, numbers, raw JSON: cannot fail
	return s.WorkflowName(), raw
}
