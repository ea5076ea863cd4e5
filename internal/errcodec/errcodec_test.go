package errcodec

import (
	"errors"
	"fmt"
	"testing"
)

type wrapped struct{ Err error }

func (e *wrapped) Error() string { return "wrapped: " + e.Err.Error() }
func (e *wrapped) Unwrap() error { return e.Err }

type declined struct{ Code string }

func (e *declined) Error() string { return "declined " + e.Code }

type remote struct {
	typ, msg string
	err      error
}

func (e *remote) Error() string { return e.msg }
func (e *remote) Unwrap() error { return e.err }

var (
	errKnown      = errors.New("known")
	errRegistered = errors.New("registered sentinel")
)

func init() {
	Register(errRegistered)
	Register(&declined{})
}

var testCodec = &Codec{
	Kinds: []Kind{
		Of("wrapped", func(e *wrapped, _ *Record) error { return e.Err },
			func(r *Record, cause error) error { return &wrapped{Err: CauseOrMessage(cause, r)} }),
		Sentinel("known", errKnown),
	},
	Remote: func(typ, message string, cause error) error { return &remote{typ, message, cause} },
}

// Each way an error revives: its kind, a kind's sentinel, a registered
// sentinel, a registered type with its fields, and a stand-in keeping the
// type, the message and the cause chain.
func TestRevival(t *testing.T) {
	for _, tc := range []struct {
		err   error
		check func(got error) bool
	}{
		{&wrapped{Err: errKnown}, func(got error) bool {
			w, ok := got.(*wrapped)        //nolint:errorlint // this link itself
			return ok && w.Err == errKnown //nolint:errorlint // the sentinel itself, not one wrapping it
		}},
		{fmt.Errorf("context: %w", errRegistered), func(got error) bool { return errors.Is(got, errRegistered) }},
		{&wrapped{Err: &declined{Code: "x"}}, func(got error) bool {
			var d *declined
			return errors.As(got, &d) && d.Code == "x"
		}},
		{fmt.Errorf("outer: %w", errors.New("inner")), func(got error) bool {
			r, ok := got.(*remote) //nolint:errorlint // this link itself
			return ok && r.typ == "*fmt.wrapError" && r.msg == "outer: inner" && r.err.Error() == "inner"
		}},
	} {
		got := testCodec.Decode(testCodec.Encode(tc.err))
		if !tc.check(got) || got.Error() != tc.err.Error() {
			t.Errorf("%v revived as %#v", tc.err, got)
		}
	}
}

// A record the codec cannot read revives as a stand-in holding its bytes.
func TestUnreadableRecord(t *testing.T) {
	got := testCodec.Decode([]byte("{not json"))
	r, ok := got.(*remote) //nolint:errorlint // this link itself
	if !ok || r.typ != "unknown" || r.msg != "{not json" || r.err != nil {
		t.Errorf("got %#v, want a stand-in of type unknown holding the bytes", got)
	}
}
