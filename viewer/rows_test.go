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

// A running step shows its attempt's last heartbeat, details and all, or
// that they are encrypted; the next attempt starts without one, and a
// step that ended shows none.
func TestRowsShowTheLastHeartbeat(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var events []world.Event
	add := func(typ world.EventType, corr, payload string) {
		events = append(events, world.Event{Slot: int64(len(events) + 1), Type: typ, CorrelationID: corr,
			Payload: []byte(payload), CreatedAt: at.Add(time.Duration(len(events)) * time.Second)})
	}
	add(world.RunCreated, "", `{"workflow":"import"}`)
	add(world.StepCreated, "1", `{"step":"copy"}`)
	add(world.StepStarted, "1", `{"attempt":1}`)
	add(world.StepHeartbeat, "1", `{"attempt":1,"details":{"rows":100}}`)
	add(world.StepHeartbeat, "1", `{"attempt":1,"details":{"rows":200}}`)
	add(world.StepCreated, "2", `{"step":"index"}`)
	add(world.StepStarted, "2", `{"attempt":1}`)
	add(world.StepHeartbeat, "2", `{"attempt":1,"$sealed":"(encrypted)"}`)
	add(world.StepCreated, "3", `{"step":"verify"}`)
	add(world.StepStarted, "3", `{"attempt":1}`)
	add(world.StepHeartbeat, "3", `{"attempt":1,"details":"half"}`)
	add(world.StepRetrying, "3", `{"attempt":1,"error":{"message":"lost"}}`)
	add(world.StepStarted, "3", `{"attempt":2}`)

	got := rows(world.Run{Workflow: "import", Status: world.StatusRunning}, events)
	copyRow, indexRow, verifyRow := got[1], got[2], got[3]
	if hb := copyRow.Heartbeat; hb == nil || string(hb.Details) != `{"rows":200}` || hb.Slot != 5 || !hb.At.Equal(at.Add(4*time.Second)) || hb.Sealed {
		t.Fatalf("the copy step's heartbeat: %+v, want the second one's details", hb)
	}
	if n := len(copyRow.Marks); n != 2 {
		t.Errorf("the copy step has %d heartbeat marks, want 2", n)
	}
	if hb := indexRow.Heartbeat; hb == nil || !hb.Sealed || hb.Details != nil {
		t.Fatalf("the sealed step's heartbeat: %+v, want it marked sealed, without details", hb)
	}
	if verifyRow.Heartbeat != nil {
		t.Fatalf("the retried step shows attempt 1's heartbeat: %+v", verifyRow.Heartbeat)
	}

	add(world.StepCompleted, "1", `{"output":1}`)
	if hb := rows(world.Run{Workflow: "import"}, events)[1].Heartbeat; hb != nil {
		t.Fatalf("the completed step still shows a heartbeat: %+v", hb)
	}
}
