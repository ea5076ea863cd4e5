package aws

import (
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// A token whose key DynamoDB would refuse (over 2,048 bytes) is not found
// rather than an error: no such token can have been claimed. Claiming one
// fails with an error that says why.
func TestOverlongHookTokens(t *testing.T) {
	w := newTestWorld(t)
	token := strings.Repeat("t", 3000)
	if _, err := w.GetHook(t.Context(), token); !errors.Is(err, world.ErrHookNotFound) {
		t.Errorf("GetHook(3,000 bytes) = %v, want ErrHookNotFound", err)
	}
	_, err := w.ClaimHook(t.Context(), world.Hook{Token: token, RunID: "r", CorrelationID: "1"}, false)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("ClaimHook(3,000 bytes) = %v, want an error naming the limit", err)
	}
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the error repeats the 3,000-byte token")
	}
}
