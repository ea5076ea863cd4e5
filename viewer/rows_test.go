package viewer

import (
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// A child run that fails and a step given up after its attempts: each row
// ends in the state its last event says, spans closed where they ended.
func TestRowsOfAFailedRun(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var events []world.Event
	add := func(typ world.EventType, corr, payload string) {
		events = append(events, world.Event{Slot: int64(len(events) + 1), Type: typ, CorrelationID: corr,
			Payload: []byte(payload), CreatedAt: at.Add(time.Duration(len(events)) * time.Second)})
	}
	add(world.RunCreated, "", `{"workflow":"order"}`)
	add(world.ChildCreated, "1", `{"workflow":"refund","childRunId":"child-9"}`)
	add(world.ChildCompleted, "1", `{"childRunId":"child-9","error":{"message":"no card"}}`)
	add(world.StepCreated, "2", `{"step":"notify"}`)
	add(world.StepStarted, "2", `{"attempt":1}`)
	add(world.StepFailed, "2", `{"attempt":1,"error":{"message":"smtp down"}}`)
	add(world.RunFailed, "", `{"error":{"message":"smtp down"}}`)

	got := rows(world.Run{Workflow: "order", Status: world.StatusFailed}, events)
	var summary []string
	for _, r := range got {
		summary = append(summary, r.Kind+":"+r.Status+":"+r.Child)
		for _, s := range r.Spans {
			if s.End.IsZero() {
				t.Errorf("%s row %q: span %q still open after the run ended", r.Kind, r.Label, s.Label)
			}
		}
	}
	if s := strings.Join(summary, " "); s != "run:failed: child:failed:child-9 step:failed:" {
		t.Fatalf("rows: %s", s)
	}
	if m := got[0].Marks; len(m) != 1 || m[0].Label != "resumed (child)" || m[0].Slot != 3 {
		t.Fatalf("run marks: %+v", m)
	}
	if s := got[2].Spans[0]; s.Status != "failed" || s.Slot != 6 || !s.End.Equal(at.Add(5*time.Second)) {
		t.Fatalf("the failed attempt: %+v", s)
	}
}
