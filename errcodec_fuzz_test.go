package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The error codec writes errors into event logs that outlive the code that
// wrote them. These fuzz tests hold it to two promises: an error survives
// the trip (kind, message and cause chain), and no bytes found in a log
// make decoding, or using what it decoded, panic.

// fuzzDeclinedError is a registered error type: it must revive with its
// fields, so errors.As finds it.
type fuzzDeclinedError struct {
	Code   string
	Amount int64
}

func (e *fuzzDeclinedError) Error() string { return fmt.Sprintf("declined %s (%d)", e.Code, e.Amount) }

var errFuzzSentinel = errors.New("fuzz: out of stock")

func init() {
	RegisterError(&fuzzDeclinedError{})
	RegisterError(errFuzzSentinel)
}

// fuzzChain builds an error chain from fuzz input: the first byte picks
// the innermost error, each further byte a wrapper around it.
func fuzzChain(shape []byte, msg string, n int64) error {
	if len(shape) == 0 {
		return errors.New(msg)
	}
	var err error
	switch shape[0] % 8 {
	case 0:
		err = errors.New(msg)
	case 1:
		err = errFuzzSentinel
	case 2:
		err = &fuzzDeclinedError{Code: msg, Amount: n}
	case 3:
		err = &RunCancelledError{RunID: msg, Reason: msg + "!"}
	case 4:
		err = &HookConflictError{Token: msg, OwnerRunID: "run-" + msg, Forced: n%2 == 0}
	case 5:
		err = &NondeterminismError{RunID: msg, Slot: n, Expected: "step " + msg, Found: "sleep"}
	case 6:
		err = &PanicError{Value: msg, Stack: "goroutine 1"}
	case 7:
		err = ErrMaxEventsExceeded
	}
	for _, b := range shape[1:min(len(shape), 12)] {
		switch b % 7 {
		case 0:
			err = Fatal(err)
		case 1:
			err = Retryable(err, time.Duration(n))
		case 2:
			err = &StepError{Step: msg, Attempts: int(n % 100), Err: err}
		case 3:
			err = &RunFailedError{RunID: msg, Err: err}
		case 4:
			err = fmt.Errorf("%s: %w", msg, err)
		case 5:
			err = &InvalidPayloadError{Err: err}
		case 6:
			err = &RemoteError{Type: "*net.OpError", Message: msg + ": " + err.Error(), Err: err}
		}
	}
	return err
}

func FuzzErrorCodecRoundTrip(f *testing.F) {
	f.Add([]byte{0}, "card declined", int64(0))
	f.Add([]byte{1, 4, 2, 3}, "checkout", int64(3))
	f.Add([]byte{2, 0, 2}, "insufficient_funds", int64(4200))
	f.Add([]byte{3, 3}, "run-1", int64(1))
	f.Add([]byte{4, 5, 6, 1}, "approval:42", int64(7))
	f.Add([]byte{5, 2, 3}, "charge", int64(12))
	f.Add([]byte{6, 2}, "index out of range", int64(0))
	f.Add([]byte{7, 3}, "", int64(-1))
	f.Fuzz(func(t *testing.T, shape []byte, msg string, n int64) {
		// The log is JSON, whose text is UTF-8: encoding/json replaces
		// invalid bytes, so only valid text can come back unchanged.
		msg = strings.ToValidUTF8(msg, "\uFFFD")
		orig := fuzzChain(shape, msg, n)
		encoded := encodeError(orig)
		got := decodeError(encoded)
		checkSameChain(t, orig, got)
		// A decoded error written again (a child's failure passed on by its
		// parent) is written as it was the first time.
		if again := encodeError(got); string(again) != string(encoded) {
			t.Errorf("re-encoding changed the record:\n first %s\nsecond %s", encoded, again)
		}
	})
}

// checkSameChain walks both cause chains: each link must keep its message
// and its kind (its own type, or a RemoteError naming the original type).
func checkSameChain(t *testing.T, want, got error) {
	t.Helper()
	for depth := 0; want != nil || got != nil; depth++ {
		if want == nil || got == nil {
			t.Fatalf("link %d: decoded chain has %v where the original has %v", depth, got, want)
		}
		if got.Error() != want.Error() {
			t.Errorf("link %d: message %q, want %q", depth, got.Error(), want.Error())
		}
		wantType := fmt.Sprintf("%T", want)
		if remote, ok := want.(*RemoteError); ok { //nolint:errorlint // this link, not its causes
			wantType = remote.Type
		}
		switch g := got.(type) { //nolint:errorlint // this link's own type
		case *RemoteError:
			if g.Type != wantType {
				t.Errorf("link %d: revived as a RemoteError of %s, want %s", depth, g.Type, wantType)
			}
		default:
			if reflect.TypeOf(got) != reflect.TypeOf(want) {
				t.Errorf("link %d: revived as %T, want %s", depth, got, wantType)
			}
			if isLeafRecord(want) && !reflect.DeepEqual(got, want) { //nolint:govet // deepequalerrors: one link, field for field, is the point
				t.Errorf("link %d: revived as %#v, want %#v", depth, got, want)
			}
		}
		want, got = errors.Unwrap(want), errors.Unwrap(got)
	}
}

// isLeafRecord reports whether a revived error must equal the original
// field for field: a leaf whose fields the record keeps.
func isLeafRecord(err error) bool {
	switch err.(type) { //nolint:errorlint // this link's own type
	case *fuzzDeclinedError, *RunCancelledError, *HookConflictError, *NondeterminismError, *PanicError:
		return true
	}
	return false
}

func FuzzErrorCodecDecode(f *testing.F) {
	for _, err := range []error{
		errors.New("plain"),
		&StepError{Step: "charge", Attempts: 4, Err: Fatal(&fuzzDeclinedError{Code: "x", Amount: 1})},
		&RunFailedError{RunID: "r", Err: fmt.Errorf("ctx: %w", errFuzzSentinel)},
		&NondeterminismError{RunID: "r", Slot: 7, Expected: "step", Found: "sleep"},
		&PanicError{Value: "boom", Stack: "trace"},
		Retryable(errors.New("429"), time.Second),
	} {
		f.Add([]byte(encodeError(err)))
	}
	f.Add([]byte(`{"kind":"fatal","message":"no cause"}`))
	f.Add([]byte(`{"kind":"registered","type":"*workflow.fuzzDeclinedError","data":[]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := decodeError(json.RawMessage(raw))
		// Everything a caller does with a run's error must work.
		for e := err; e != nil; e = errors.Unwrap(e) {
			_ = e.Error()
		}
		_ = errors.Is(err, ErrRunFailed)
		var declined *fuzzDeclinedError
		_ = errors.As(err, &declined)
		// Written again, it comes back the same (once JSON has replaced
		// any invalid UTF-8 the bytes held).
		once := decodeError(encodeError(err))
		checkSameChain(t, once, decodeError(encodeError(once)))
	})
}
