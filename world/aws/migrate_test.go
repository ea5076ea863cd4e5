package aws

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// TestMigrateRunIndexes: a run item written before the listing indexes
// were sharded (one listAll partition for every run) is readable but not
// listed; MigrateRunIndexes moves it into the sharded indexes, once, and
// leaves runs written since as they are.
func TestMigrateRunIndexes(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	if _, err := w.CreateRun(ctx, testRun("new"), []world.Event{testEvent(world.RunCreated, "")}); err != nil {
		t.Fatal(err)
	}
	old := testRun("old")
	if _, err := w.CreateRun(ctx, old, []world.Event{testEvent(world.RunCreated, "")}); err != nil {
		t.Fatal(err)
	}
	// Make "old" what the World wrote before: listAll, no shard keys.
	legacy, err := w.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: &w.opts.Table, Key: itemKeys{PK: runPK("old"), SK: skRun}.key()})
	if err != nil {
		t.Fatal(err)
	}
	item := legacy.Item
	delete(item, attrCreatedShard)
	delete(item, attrWorkflowShard)
	item[legacyListAll] = &types.AttributeValueMemberS{Value: "run"}
	if _, err := w.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &w.opts.Table, Item: item}); err != nil {
		t.Fatal(err)
	}

	if _, err := w.GetRun(ctx, "old"); err != nil {
		t.Fatalf("an old run is not readable: %v", err)
	}
	listed := func(f world.RunFilter) []string {
		t.Helper()
		var ids []string
		deadline := time.Now().Add(10 * time.Second) // indexes are eventually consistent
		for {
			page, err := w.ListRuns(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			ids = ids[:0]
			for _, r := range page.Runs {
				ids = append(ids, r.ID)
			}
			if len(ids) == 2 || time.Now().After(deadline) {
				return ids
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if ids := listed(world.RunFilter{}); len(ids) != 1 || ids[0] != "new" {
		t.Fatalf("before the migration, the listing holds %v, want [new]", ids)
	}
	w.ResetCalls()
	moved, err := w.MigrateRunIndexes(ctx)
	if err != nil || moved != 1 {
		t.Fatalf("MigrateRunIndexes moved %d, %v; want 1", moved, err)
	}
	checkCalls(t, w, "MigrateRunIndexes of one old run", map[string]int64{"DynamoDB.Scan": 1, "DynamoDB.UpdateItem": 1})
	for _, f := range []world.RunFilter{{}, {Workflow: old.Workflow}} {
		if ids := listed(f); len(ids) != 2 {
			t.Errorf("after the migration, listing %+v holds %v, want both runs", f, ids)
		}
	}
	if moved, err := w.MigrateRunIndexes(ctx); err != nil || moved != 0 {
		t.Errorf("a second migration moved %d, %v; want none", moved, err)
	}
}
