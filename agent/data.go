package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lambdaworkflow/workflow"
)

// DataUpdate is a structured-data part's payload: one update of an object
// a client renders as UI state (a form, a table, a card) beside the
// text, as useStructuredData emits them. StreamID names the object;
// Kind says how to apply Value at Path (dot notation: "draft.body",
// "rows.0.cells"):
//
//   - [DataSet]: Value is the value at Path.
//   - [DataAppend]: Value is a JSON array of items appended to the array at Path.
//   - [DataTextDelta]: Value is a JSON string appended to the string at Path.
//   - [DataFinal]: Value is the whole object, validated against its type;
//     the client replaces what it built with it. Updates before it are
//     provisional: a client that sees the stream's call start again (see
//     [PartStart]) or an error drops them.
type DataUpdate struct {
	StreamID string          `json:"streamId"`
	Kind     DataKind        `json:"kind"`
	Path     string          `json:"path,omitempty"`
	Value    json.RawMessage `json:"value"`
}

// DataKind says how a DataUpdate applies.
type DataKind string

// The kinds of update.
const (
	DataSet       DataKind = "set"
	DataAppend    DataKind = "append"
	DataTextDelta DataKind = "text-delta"
	DataFinal     DataKind = "final"
)

// DataStream writes the structured-data parts of one object of type T to
// the run's stream, from a step (a step-level tool, or a step of the
// application's). It checks each update against what it wrote before (an
// append needs an array, a text-delta a string, and a path that holds a
// string, number or boolean cannot become an object) and the final object
// against T's JSON schema and Validate method; an update that fails is
// not written.
type DataStream[T any] struct {
	streamID string
	schema   schema
	emit     func(Part) error
	built    any
}

// NewDataStream opens the structured stream streamID in the run's stream
// namespace (an agent's [Agent.Namespace]), in a step: pass the step's
// context. Its parts' Call is the step's ID and streamID; each attempt
// announces itself with a start part, so a client drops the updates of an
// attempt that a retry replaces. Open one DataStream per object and
// attempt.
func NewDataStream[T any](ctx context.Context, namespace, streamID string) (*DataStream[T], error) {
	info, ok := workflow.GetStepInfo(ctx)
	if !ok {
		return nil, fmt.Errorf("agent: NewDataStream: %w", workflow.ErrNotInStep)
	}
	// The stream's parts are a call of their own, so that a step may
	// write several objects and a retry's start drops only this one's.
	emit, err := openCall(ctx, namespace, info.StepID+"/"+streamID, info.Attempt)
	if err != nil {
		return nil, err
	}
	return newDataStream[T](streamID, emit), nil
}

// newDataStream writes with emit, for a step that already announced its
// attempt (a model call's).
func newDataStream[T any](streamID string, emit func(Part) error) *DataStream[T] {
	return &DataStream[T]{streamID: streamID, schema: schemaOf[T](), emit: emit}
}

// Set sets the value at path.
func (d *DataStream[T]) Set(path string, value any) error { return d.update(DataSet, path, value) }

// Append appends items to the array at path.
func (d *DataStream[T]) Append(path string, items ...any) error {
	return d.update(DataAppend, path, items)
}

// TextDelta appends text to the string at path.
func (d *DataStream[T]) TextDelta(path, text string) error {
	return d.update(DataTextDelta, path, text)
}

// Final validates the whole object and writes it.
func (d *DataStream[T]) Final(v T) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return d.final(raw)
}

// final writes an encoded final object if T's schema and Validate accept it.
func (d *DataStream[T]) final(raw json.RawMessage) error {
	if _, err := decodeChecked[T](d.schema, raw); err != nil {
		return fmt.Errorf("agent: structured stream %q: the final object is invalid: %w", d.streamID, err)
	}
	return d.write(DataUpdate{StreamID: d.streamID, Kind: DataFinal, Value: raw})
}

func (d *DataStream[T]) update(kind DataKind, path string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return d.write(DataUpdate{StreamID: d.streamID, Kind: kind, Path: path, Value: raw})
}

// write applies u to the object built so far, then writes it.
func (d *DataStream[T]) write(u DataUpdate) error {
	built, err := applyData(d.built, u)
	if err != nil {
		return err
	}
	if err := d.emit(Part{Type: PartData, Data: &u}); err != nil {
		return err
	}
	d.built = built
	return nil
}
