package main

import (
	"strings"
	"testing"
	"time"
)

// The program as make flight runs it, on the embedded World over HTTP,
// with the price watch cut to a blink: the traveller's approval reaches
// the waiting booking through the approvals route, and the session ends.
func TestTheTravellerBooksOverHTTP(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), t.TempDir(), 10*time.Millisecond, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"→ book_flight", "(waits for approval)", "traveller: approves book_flight",
		"← book_flight success", "confirmation CONF-UA415", "(completed)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the conversation lacks %q:\n%s", want, out.String())
		}
	}
}
