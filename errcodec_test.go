package workflow

import (
	"errors"
	"fmt"
	"testing"
)

// Every sentinel users match survives the log, wrapped or not: it revives
// as the same value, whichever package defines it (the World's, the
// engine's, the reply stream's or the root's own).
func TestSentinelsSurviveTheLog(t *testing.T) {
	for _, sentinel := range []error{
		ErrRunNotFound, ErrRunFinished, ErrHookNotFound, ErrStreamClosed,
		ErrMaxEventsExceeded, ErrRunStuck, ErrStepTooLong, ErrAttemptInterrupted, ErrHeartbeatTimeout,
		ErrHookResponseNotSent, ErrAlreadyResponded, ErrReplyRestarted,
		ErrHookDisposed, ErrNotRespondingHook, ErrNotInStep, ErrNoReplyChannel, ErrNotWebhook,
	} {
		for _, err := range []error{sentinel, fmt.Errorf("cancel run r-1: %w", sentinel), &StepError{Step: "s", Attempts: 1, Err: sentinel}} {
			if got := decodeError(encodeError(err)); !errors.Is(got, sentinel) {
				t.Errorf("%v read back from the log as %#v: errors.Is(_, %q) is false", err, got, sentinel)
			}
		}
	}
}
