package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow"
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

// An event item without its slot (written by hand, or by a broken tool)
// in the slot the run's log takes next: the resume waits in the run's
// inbox, and the fold that would append it fails at once with an error
// that says the log is corrupt, instead of retrying the same slot for ever.
func TestCorruptEventItemStopsAFold(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	now := time.Now()
	run := world.Run{ID: "corrupt", Workflow: "wf", Status: world.StatusRunning, CreatedAt: now, UpdatedAt: now}
	if _, err := w.CreateRun(ctx, run, []world.Event{{Type: world.RunCreated, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ClaimHook(ctx, world.Hook{Token: "corrupt-token", RunID: run.ID, CorrelationID: "1", CreatedAt: now}, false); err != nil {
		t.Fatal(err)
	}
	// Slot 2 is the next free one; its item has no slot attribute.
	if _, err := w.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &w.opts.Table, Item: map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: runPK(run.ID)},
		attrSK: &types.AttributeValueMemberS{Value: eventSK(2)},
		"type": &types.AttributeValueMemberS{Value: string(world.HookReceived)},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := workflow.ResumeHook(ctx, workflow.NewClient(w), "corrupt-token", "hello"); err != nil {
		t.Fatalf("resume = %v; it only writes the run's inbox", err)
	}
	holder := world.Lease{Owner: "holder", Until: now.Add(time.Minute)}
	if _, err := w.AcquireLease(ctx, run.ID, holder, now); err != nil {
		t.Fatal(err)
	}
	msgs, err := w.Inbox(ctx, run.ID)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Inbox = %v, %v; want the resume's message", msgs, err)
	}
	w.ResetCalls()
	_, err = w.AppendFolded(ctx, holder.Owner, run.ID, 2, []world.Event{msgs[0].Event}, nil, []string{msgs[0].ID})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("fold = %v, want an error saying the log is corrupt", err)
	}
	if n := w.Calls()["DynamoDB.TransactWriteItems"]; n > 1 {
		t.Errorf("the fold tried %d appends, want one", n)
	}
	if _, err := w.Events(ctx, run.ID, 0); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("Events = %v, want an error saying the log is corrupt", err)
	}
}

// Resumes keep to the run's event limit with the inbox too: a resume is
// accepted while the log and the inbox together hold fewer events than
// the limit, so once the resumes are refused (ErrMaxEventsExceeded) the
// inbox holds exactly what fits, and the run, having folded it, fails
// with the same cause instead of replaying a log without end.
func TestResumesStopAtTheEventLimit(t *testing.T) {
	const limit = 20
	w := newTestWorld(t)
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	c := workflow.NewClient(w, workflow.WithMaxEvents(limit))
	token := fmt.Sprint("aws-test:limit:", time.Now().UnixNano())
	run, err := workflow.Start(ctx, c, inbox, token)
	if err != nil {
		t.Fatal(err)
	}
	worker := func(ctx context.Context) error {
		return workflow.NewWorker(w, workflow.WorkerOptions{MaxEvents: limit}).Run(ctx)
	}
	// The worker runs until the run holds its token, then stops, so that
	// the resumes below wait in the inbox.
	first, stopFirst := context.WithCancel(ctx)
	go worker(first)
	for workflow.ResumeHook(ctx, c, token, "first") != nil {
		time.Sleep(20 * time.Millisecond)
	}
	waitFolded(t, w, run.ID, 1)
	stopFirst()
	accepted := 0
	for range 2 * limit {
		if err = workflow.ResumeHook(ctx, c, token, "more"); err != nil {
			break
		}
		accepted++
	}
	if !errors.Is(err, workflow.ErrMaxEventsExceeded) {
		t.Fatalf("after %d resumes: err = %v, want ErrMaxEventsExceeded", accepted, err)
	}
	state, err := w.GetRun(ctx, run.ID)
	if err != nil || state.LastSlot+int64(state.Inbox) != limit {
		t.Fatalf("the log holds %d events and the inbox %d after the resumes, want %d together: %v", state.LastSlot, state.Inbox, limit, err)
	}
	go worker(ctx)
	if _, err := run.Result(ctx); !errors.Is(err, workflow.ErrMaxEventsExceeded) {
		t.Fatalf("run = %v, want ErrMaxEventsExceeded", err)
	}
}
