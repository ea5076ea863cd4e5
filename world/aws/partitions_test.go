package aws

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/lambdaworkflow/workflow"
)

var awsTenSteps = workflow.Define("aws-test.ten-steps", func(ctx workflow.Context, _ int) (int, error) {
	n := 0
	for range 10 {
		var err error
		if n, err = awsStep.Call(ctx, n); err != nil {
			return 0, err
		}
	}
	return n, nil
})

// TestNoHotPartition runs 100 runs of ten steps each and records every
// partition key the World's writes reach: the table's, and each index's,
// derived from the items written as DynamoDB derives them (an index is
// written when an item with its key is put or deleted, or updated in its
// key or in an attribute it projects). A key outside one run's own
// partition is shared: it fails the test if it takes the writes of more
// than a quarter of the runs, or more than a quarter of its index's
// writes. A listing index with one partition for all runs (or for all runs
// of a workflow) takes all of both.
func TestNoHotPartition(t *testing.T) {
	rec := newKeyRecorder()
	cfg := emulatorConfig(t)
	cfg.APIOptions = append(cfg.APIOptions, rec.register)
	w := newTestWorldWith(t, cfg)
	rec.learnIndexes(t, w)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Concurrency: 32})
	go worker.Run(ctx)
	c := workflow.NewClient(w)
	const runs = 100
	ids := make([]string, runs)
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		run, err := workflow.Start(ctx, c, awsTenSteps, i)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = run.ID
		wg.Go(func() {
			if n, err := run.Result(ctx); err != nil || n != 10 {
				errs <- fmt.Errorf("run %s: %d, %w", run.ID, n, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	owners := func(key string) map[string]bool {
		found := map[string]bool{}
		for _, id := range ids {
			if strings.Contains(key, id) {
				found[id] = true
			}
		}
		return found
	}
	counts := rec.counts()
	perIndex := map[string]int{}
	for k, n := range counts {
		perIndex[k.index] += n
	}
	type hot struct {
		key    partitionKey
		writes int
		runs   int
	}
	var shared []hot
	for k, n := range counts {
		var runsOf map[string]bool
		if k.index == "" {
			runsOf = owners(k.value)
		} else {
			runsOf = rec.runsOf(k, owners)
		}
		if k.index == "" && len(runsOf) <= 1 {
			continue // one run's own: its partition, its dedup markers, its streams
		}
		shared = append(shared, hot{k, n, len(runsOf)})
	}
	slices.SortFunc(shared, func(a, b hot) int { return b.writes - a.writes })
	for _, h := range shared[:min(len(shared), 6)] {
		t.Logf("hottest shared keys: %s: %d writes (of its index's %d), for %d runs", h.key, h.writes, perIndex[h.key.index], h.runs)
	}
	for _, h := range shared {
		if h.runs > runs/4 || (h.key.index != "" && h.writes > perIndex[h.key.index]/4) {
			t.Errorf("%s takes %d writes (its index took %d) for %d of the %d runs: more than its share", h.key, h.writes, perIndex[h.key.index], h.runs, runs)
		}
	}
	if perIndex[indexCreated] == 0 || perIndex[indexDue] == 0 {
		t.Errorf("the recorder saw no index writes: %v", perIndex)
	}
}

// partitionKey is a partition written: the table's (index "") or an
// index's.
type partitionKey struct{ index, value string }

func (k partitionKey) String() string {
	if k.index == "" {
		return "table partition " + k.value
	}
	return k.index + " partition " + k.value
}

// indexShape is what decides whether a write reaches an index.
type indexShape struct {
	name, hash string
	reads      func(attr string) bool // a key or projected attribute
}

// keyRecorder derives the partitions of each successful write from its
// request and what it has seen of the item before.
type keyRecorder struct {
	mu      sync.Mutex
	indexes []indexShape
	items   map[itemKeys]map[string]string // index hash attributes known per item
	writes  map[partitionKey]int
	tables  map[partitionKey]map[string]bool // index partition → table partitions written through it
}

func newKeyRecorder() *keyRecorder {
	return &keyRecorder{items: map[itemKeys]map[string]string{}, writes: map[partitionKey]int{}, tables: map[partitionKey]map[string]bool{}}
}

// learnIndexes reads the table's indexes as the emulator made them.
func (r *keyRecorder) learnIndexes(t *testing.T, w *World) {
	out, err := w.ddb.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &w.opts.Table})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		shape := indexShape{name: aws.ToString(g.IndexName)}
		keys := map[string]bool{attrPK: true, attrSK: true}
		for _, k := range g.KeySchema {
			keys[aws.ToString(k.AttributeName)] = true
			if k.KeyType == types.KeyTypeHash {
				shape.hash = aws.ToString(k.AttributeName)
			}
		}
		for _, a := range g.Projection.NonKeyAttributes {
			keys[a] = true
		}
		all := g.Projection.ProjectionType == types.ProjectionTypeAll
		shape.reads = func(attr string) bool { return all || keys[attr] }
		r.indexes = append(r.indexes, shape)
	}
	if len(r.indexes) == 0 {
		t.Fatal("the table has no indexes")
	}
}

func (r *keyRecorder) register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("recordPartitionKeys",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err == nil {
				r.record(in.Parameters)
			}
			return out, md, err
		}), middleware.After)
}

func (r *keyRecorder) record(input any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch in := input.(type) {
	case *dynamodb.PutItemInput:
		r.put(in.Item)
	case *dynamodb.UpdateItemInput:
		r.update(in.Key, aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	case *dynamodb.DeleteItemInput:
		r.remove(in.Key)
	case *dynamodb.BatchWriteItemInput:
		for _, requests := range in.RequestItems {
			for _, w := range requests {
				if w.PutRequest != nil {
					r.put(w.PutRequest.Item)
				} else if w.DeleteRequest != nil {
					r.remove(w.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, item := range in.TransactItems {
			switch {
			case item.Put != nil:
				r.put(item.Put.Item)
			case item.Update != nil:
				r.update(item.Update.Key, aws.ToString(item.Update.UpdateExpression), item.Update.ExpressionAttributeNames, item.Update.ExpressionAttributeValues)
			case item.Delete != nil:
				r.remove(item.Delete.Key)
			}
		}
	}
}

func keysOf(av map[string]types.AttributeValue) itemKeys {
	return itemKeys{PK: stringAttr(av, attrPK), SK: stringAttr(av, attrSK)}
}

func (r *keyRecorder) hit(k partitionKey, table string) {
	r.writes[k]++
	if r.tables[k] == nil {
		r.tables[k] = map[string]bool{}
	}
	r.tables[k][table] = true
}

func (r *keyRecorder) put(item map[string]types.AttributeValue) {
	k := keysOf(item)
	r.writes[partitionKey{value: k.PK}]++
	old := r.items[k]
	known := map[string]string{}
	for _, ix := range r.indexes {
		if v := stringAttr(item, ix.hash); v != "" {
			known[ix.hash] = v
			r.hit(partitionKey{ix.name, v}, k.PK)
		} else if old[ix.hash] != "" {
			r.hit(partitionKey{ix.name, old[ix.hash]}, k.PK) // replaced out of the index
		}
	}
	r.items[k] = known
}

func (r *keyRecorder) remove(key map[string]types.AttributeValue) {
	k := keysOf(key)
	r.writes[partitionKey{value: k.PK}]++
	for _, ix := range r.indexes {
		if v := r.items[k][ix.hash]; v != "" {
			r.hit(partitionKey{ix.name, v}, k.PK)
		}
	}
	delete(r.items, k)
}

// updateClauses finds the attributes an update expression sets and
// removes, with the value placeholder of each set.
var (
	setClause    = regexp.MustCompile(`(#\w+)((?:\.#\w+)*)\s*=\s*(:\w+)`)
	removeClause = regexp.MustCompile(`REMOVE\s+([^A-Z]+)`)
	nameToken    = regexp.MustCompile(`#\w+`)
)

func (r *keyRecorder) update(key map[string]types.AttributeValue, expr string, names map[string]string, values map[string]types.AttributeValue) {
	k := keysOf(key)
	r.writes[partitionKey{value: k.PK}]++
	touched := map[string]bool{}
	set := map[string]string{}
	for _, m := range setClause.FindAllStringSubmatch(expr, -1) {
		name := names[m[1]]
		touched[name] = true
		if s, ok := values[m[3]].(*types.AttributeValueMemberS); ok && m[2] == "" {
			set[name] = s.Value
		}
	}
	removed := map[string]bool{}
	if m := removeClause.FindStringSubmatch(expr); m != nil {
		for _, tok := range nameToken.FindAllString(m[1], -1) {
			touched[names[tok]], removed[names[tok]] = true, true
		}
	}
	known := r.items[k]
	if known == nil {
		known = map[string]string{}
		r.items[k] = known
	}
	for _, ix := range r.indexes {
		before := known[ix.hash]
		after := before
		if v, ok := set[ix.hash]; ok {
			after = v
		}
		if removed[ix.hash] {
			after = ""
		}
		changed := false
		for name := range touched {
			changed = changed || ix.reads(name)
		}
		if changed && before != "" {
			r.hit(partitionKey{ix.name, before}, k.PK)
		}
		if changed && after != "" && after != before {
			r.hit(partitionKey{ix.name, after}, k.PK)
		}
		if after == "" {
			delete(known, ix.hash)
		} else {
			known[ix.hash] = after
		}
	}
}

func (r *keyRecorder) counts() map[partitionKey]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[partitionKey]int, len(r.writes))
	for k, n := range r.writes {
		out[k] = n
	}
	return out
}

// runsOf returns the runs whose items were written through index key k.
func (r *keyRecorder) runsOf(k partitionKey, owners func(string) map[string]bool) map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	runs := map[string]bool{}
	for table := range r.tables[k] {
		for id := range owners(table) {
			runs[id] = true
		}
	}
	return runs
}
