package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// legacyListAll is the attribute that put every run in the one partition
// of the listing index runs-by-created, before the listing indexes were
// write-sharded (listing.go).
const legacyListAll = "listAll"

// MigrateRunIndexes gives every run item written before the listing
// indexes were write-sharded its shard keys (createdShard and, with a
// workflow, workflowShard) and removes its old listAll, so that
// ListRuns, which reads only the sharded indexes, lists it again: one
// Scan of the table's run items that lack createdShard, and one
// conditional UpdateItem per run found. It returns how many runs it
// moved; running it again moves none, and runs written meanwhile never
// need it. GetRun and everything else read runs by their table key,
// which did not change, so old runs stay readable before it runs.
func (w *World) MigrateRunIndexes(ctx context.Context) (int, error) {
	filter := expression.Name(attrSK).Equal(expression.Value(skRun)).
		And(expression.AttributeNotExists(expression.Name(attrCreatedShard)))
	scan, err := expression.NewBuilder().WithFilter(filter).
		WithProjection(expression.NamesList(expression.Name(attrPK), expression.Name(attrWorkflow))).Build()
	if err != nil {
		return 0, err
	}
	pages := dynamodb.NewScanPaginator(w.ddb, &dynamodb.ScanInput{
		TableName:                 &w.opts.Table,
		FilterExpression:          scan.Filter(),
		ProjectionExpression:      scan.Projection(),
		ExpressionAttributeNames:  scan.Names(),
		ExpressionAttributeValues: scan.Values(),
	})
	moved := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return moved, fmt.Errorf("migrate run indexes: %w", err)
		}
		for _, av := range page.Items {
			var run struct {
				PK       string `json:"pk"`
				Workflow string `json:"workflow"`
			}
			if err := unmarshalItem(av, &run); err != nil {
				return moved, fmt.Errorf("migrate run indexes: decode %v: %w", av[attrPK], err)
			}
			id := run.PK[len("run#"):]
			update := expression.Set(expression.Name(attrCreatedShard), expression.Value(createdShardKey(id))).
				Remove(expression.Name(legacyListAll))
			if run.Workflow != "" {
				update = update.Set(expression.Name(attrWorkflowShard), expression.Value(workflowShardKey(run.Workflow, id)))
			}
			_, refused, err := w.updateIf(ctx, itemKeys{PK: run.PK, SK: skRun}.key(), update, expression.AttributeExists(expression.Name(attrPK)))
			if err != nil {
				return moved, fmt.Errorf("migrate run indexes: run %s: %w", id, err)
			}
			if !refused { // refused: deleted since the scan
				moved++
			}
		}
	}
	return moved, nil
}
