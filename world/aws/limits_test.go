package aws

import (
	"errors"
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
// in the slot a resume writes next: the resume fails at once with an error
// that says the log is corrupt, instead of retrying the same slot for ever.
func TestCorruptEventItemStopsAResume(t *testing.T) {
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
	w.ResetCalls()
	err := workflow.ResumeHook(ctx, workflow.NewClient(w), "corrupt-token", "hello")
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("resume = %v, want an error saying the log is corrupt", err)
	}
	if n := w.Calls()["DynamoDB.TransactWriteItems"]; n > 1 {
		t.Errorf("the resume tried %d appends, want one", n)
	}
	if _, err := w.Events(ctx, run.ID, 0); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("Events = %v, want an error saying the log is corrupt", err)
	}
}
