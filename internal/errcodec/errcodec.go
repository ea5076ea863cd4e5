// Package errcodec writes errors into a run's log as JSON records and
// revives them when the log is read, in this process or another, built
// from the same or a later version of the code.
//
// A record is one link of an error's chain, with its cause in a nested
// record. A known kind revives as its own type (the root package lists
// its error types as kinds); a registered error type revives as itself, so
// errors.As finds it with its fields; a registered sentinel revives as the
// same value, so errors.Is matches it; anything else becomes a stand-in
// that keeps the original type's name, the message and the cause chain.
package errcodec

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Record is one link of an error's chain as the log stores it.
type Record struct {
	Kind       string          `json:"kind,omitempty"`
	Type       string          `json:"type,omitempty"`
	Message    string          `json:"message"`
	Data       json.RawMessage `json:"data,omitempty"`
	Step       string          `json:"step,omitempty"`
	Attempts   int             `json:"attempts,omitempty"`
	RunID      string          `json:"runId,omitempty"`
	RetryAfter time.Duration   `json:"retryAfter,omitempty"`
	Stack      string          `json:"stack,omitempty"`
	Cause      *Record         `json:"cause,omitempty"`
}

// Codec encodes and decodes errors: first by its kinds, then by what
// Register was given, and otherwise through Remote.
type Codec struct {
	// Kinds are the error types the codec knows by name.
	Kinds []Kind
	// Convert, if set, replaces a link before it is written: an error
	// type that stands for another one users match is written as that one.
	Convert func(err error) error
	// Remote makes the stand-in of an error whose type is not known.
	Remote func(typ, message string, cause error) error
}

// Kind is one error type the codec writes under a name of its own.
type Kind struct {
	// Name is the kind records of the type carry; empty for a type that
	// is written as the error it stands for (it has no decoder).
	Name string
	// Encode describes err, this link of the chain itself, in r and
	// returns its cause; ok is false if err is not of the kind.
	Encode func(err error, r *Record) (cause error, ok bool)
	// Decode revives a record of the kind, given its revived cause; nil
	// if the record does not hold one (a hand-edited log), which then
	// revives as a registered error or a stand-in.
	Decode func(r *Record, cause error) error
}

// Of is the Kind of the error type E (a pointer type, as errors are).
// encode fills what the record keeps of e beyond its type and message, and
// returns e's cause; decode may be nil for a type written as another.
func Of[E error](name string, encode func(e E, r *Record) (cause error), decode func(r *Record, cause error) error) Kind {
	return Kind{Name: name, Decode: decode, Encode: func(err error, r *Record) (error, bool) {
		e, ok := err.(E) //nolint:errorlint // this link's own type, not one in its chain
		if !ok {
			return nil, false
		}
		r.Kind = name
		return encode(e, r), true
	}}
}

// Sentinel is the Kind of one sentinel value, which revives as itself.
func Sentinel(name string, sentinel error) Kind {
	return Kind{
		Name: name,
		Encode: func(err error, r *Record) (error, bool) {
			if err != sentinel { //nolint:errorlint // this link itself: a wrapper is a link of its own
				return nil, false
			}
			r.Kind = name
			return nil, true
		},
		Decode: func(*Record, error) error { return sentinel },
	}
}

// Encode writes err's chain as JSON.
func (c *Codec) Encode(err error) json.RawMessage {
	b, _ := json.Marshal(c.record(err))
	return b
}

func (c *Codec) record(err error) *Record {
	if err == nil {
		return nil
	}
	if c.Convert != nil {
		err = c.Convert(err)
	}
	r := &Record{Type: fmt.Sprintf("%T", err), Message: err.Error()}
	cause, known := c.encodeKind(err, r)
	if !known {
		if isRegisteredType(r.Type) {
			r.Kind, r.Data = "registered", Marshal(err)
		}
		cause = errors.Unwrap(err)
	}
	r.Cause = c.record(cause)
	return r
}

func (c *Codec) encodeKind(err error, r *Record) (error, bool) {
	for _, k := range c.Kinds {
		if cause, ok := k.Encode(err, r); ok {
			return cause, true
		}
	}
	return nil, false
}

// Decode revives an error Encode wrote. Bytes that are not a record
// revive as a stand-in holding them.
func (c *Codec) Decode(raw json.RawMessage) error {
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return c.Remote("unknown", string(raw), nil)
	}
	return c.revive(&r)
}

func (c *Codec) revive(r *Record) error {
	if r == nil {
		return nil
	}
	cause := c.revive(r.Cause)
	for _, k := range c.Kinds {
		if k.Name == r.Kind && k.Decode != nil {
			if err := k.Decode(r, cause); err != nil {
				return err
			}
			break
		}
	}
	if err := registeredError(r); err != nil {
		return err
	}
	return c.Remote(r.Type, r.Message, cause)
}

// CauseOrMessage is the cause of an error that only wraps one. A record
// without it (hand-edited, or written by a buggy writer) keeps its message
// as the cause, since such types' Error methods report their cause's.
func CauseOrMessage(cause error, r *Record) error {
	if cause == nil {
		return errors.New(r.Message)
	}
	return cause
}

// Marshal is v as JSON, or nothing if v does not encode: a record keeps
// what it can.
func Marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
