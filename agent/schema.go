package agent

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// schema is a Go type's JSON schema, encoded for the model and resolved
// for validating what the model or a person sends.
type schema struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

// schemaOf returns T's schema. A type that has no JSON schema (a channel,
// a func) is a bug in a definition: it panics, at package initialisation.
func schemaOf[T any]() schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("agent: JSON schema of %T: %v", *new(T), err))
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agent: encoding the JSON schema of %T: %v", *new(T), err))
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("agent: resolving the JSON schema of %T: %v", *new(T), err))
	}
	return schema{raw: raw, resolved: resolved}
}

// SchemaFor returns the JSON schema of T, the way tools describe their
// input and interrupts their request and response.
func SchemaFor[T any]() json.RawMessage { return schemaOf[T]().raw }

// check reports whether raw is JSON that the schema accepts.
func (s schema) check(raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.resolved.Validate(v)
}

// Validator is a type with rules of its own beyond its schema: a
// structured output or an interrupt's response whose type has a Validate
// method is accepted only if it returns nil.
type Validator interface{ Validate() error }

// decodeChecked checks raw against T's schema, decodes it, and runs T's
// Validate method if it has one.
func decodeChecked[T any](s schema, raw json.RawMessage) (T, error) {
	var v T
	if err := s.check(raw); err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, err
	}
	if val, ok := any(&v).(Validator); ok {
		return v, val.Validate()
	} else if val, ok := any(v).(Validator); ok {
		return v, val.Validate()
	}
	return v, nil
}

// checkAgainst checks raw against a schema sent as JSON (an interrupt
// hook's copy of its response schema).
func checkAgainst(schemaJSON, raw json.RawMessage) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		return fmt.Errorf("reading the schema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("resolving the schema: %w", err)
	}
	return schema{raw: schemaJSON, resolved: resolved}.check(raw)
}
