package aws

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// The table's key schema and indexes; doc.go draws the layout.
const (
	attrPK = "pk"
	attrSK = "sk"

	// indexCreated lists every run, newest first, and indexWorkflow one
	// workflow's: partitions attrCreatedShard and attrWorkflowShard, each
	// of listShards values per listing; sort attrCreated (listing.go).
	indexCreated      = "runs-by-created-shard"
	attrCreatedShard  = "createdShard"
	indexWorkflow     = "runs-by-workflow-shard"
	attrWorkflowShard = "workflowShard"
	attrWorkflow      = "workflow"
	attrCreated       = "created"

	// indexDue lists the runs with a due time (see overdue.go), sparse and
	// keys only: partition attrDueShard (one of dueShards), sort attrDue.
	indexDue     = "runs-by-due"
	attrDueShard = "dueShard"
	attrDue      = "due"

	// attrExpiresAt is the table's TTL attribute (Unix seconds). DynamoDB
	// deletes expired items lazily (within days), so readers check expiry
	// themselves (expired).
	attrExpiresAt = "expiresAt"
)

// Item keys. Sort keys are chosen so that one Query returns a log's or a
// stream's entries followed by its head: "ev#head" sorts after every
// "ev#<20 digits>", "chunk#head" after every "chunk#<20 digits>".
func runPK(id string) string      { return "run#" + id }
func hookPK(token string) string  { return "hook#" + token }
func streamPK(name string) string { return "stream#" + name }
func dedupPK(key string) string   { return "dedup#" + key }
func eventSK(slot int64) string   { return fmt.Sprintf("ev#%020d", slot) }
func chunkSK(index int64) string  { return fmt.Sprintf("chunk#%020d", index) }

// maxPartitionKey is DynamoDB's limit on the size of a partition key, in
// bytes: an item with a longer key can be neither stored nor asked for.
const maxPartitionKey = 2048

const (
	skRun       = "run"
	skLogHead   = "ev#head"
	skHook      = "hook"
	skChunkHead = "chunk#head"
	skDedup     = "dedup"
)

// itemKeys is embedded in every item type.
type itemKeys struct {
	PK string `json:"pk"`
	SK string `json:"sk"`
}

// key returns the item's primary key as DynamoDB takes it.
func (k itemKeys) key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: k.PK},
		attrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// runItem is a run's entity. Input, Output and Error too large for the item
// live in S3 under the *Ref keys.
type runItem struct {
	itemKeys
	CreatedShard  string `json:"createdShard"`
	WorkflowShard string `json:"workflowShard,omitempty"` // absent without a workflow
	Created       string `json:"created"`                 // listing order: write time, then ID
	ExpiresAt     int64  `json:"expiresAt,omitempty"`
	world.Run
	InputRef  string `json:"inputRef,omitempty"`
	OutputRef string `json:"outputRef,omitempty"`
	ErrorRef  string `json:"errorRef,omitempty"`
}

// listingKey orders runs by when they were stored, which is the order
// memory.World lists them in, whatever CreatedAt the caller set.
func listingKey(at time.Time, id string) string {
	return at.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + id
}

// logHead sits after a run's events and guards appends: Next is the next
// free slot, Finished is set with a terminal status. It also holds the
// run's lease (LeaseUntil in Unix milliseconds), so that the condition an
// append already checks fences off a writer that lost the lease at no
// extra write. It is small, so that condition costs little.
type logHead struct {
	itemKeys
	Next       int64  `json:"next"`
	Finished   bool   `json:"finished"`
	LeaseOwner string `json:"leaseOwner,omitempty"`
	LeaseUntil int64  `json:"leaseUntil,omitempty"`
	ExpiresAt  int64  `json:"expiresAt,omitempty"` // set with Finished, unless kept for ever
	// DueShard and Due (Unix milliseconds, absent: never) say when the
	// run is next due to move; Requeued is the last slot when the
	// stuck-run check re-queued it (overdue.go).
	DueShard string `json:"dueShard,omitempty"`
	Due      int64  `json:"due,omitempty"`
	Requeued int64  `json:"requeued,omitempty"`
}

// eventItem is one entry of a run's log, keyed by its slot, or, in an
// append too large for one item per event (packed.go), several: Before
// holds the events at the slots right before the item's own, in order.
type eventItem struct {
	itemKeys
	world.Event
	PayloadRef string        `json:"payloadRef,omitempty"`
	Before     []packedEvent `json:"before,omitempty"`
	ExpiresAt  int64         `json:"expiresAt,omitempty"`
}

// packedEvent is an event of an eventItem's Before, with the S3 key of
// its payload if that went there.
type packedEvent struct {
	world.Event
	PayloadRef string `json:"payloadRef,omitempty"`
}

// hookItem holds a hook token. Claim is a random ID per claim, so that a
// takeover replaces exactly the claim it looked at.
type hookItem struct {
	itemKeys
	world.Hook
	Claim     string `json:"claim"`
	ExpiresAt int64  `json:"expiresAt,omitempty"`
}

// streamHead sits after a stream's chunks: Next is the next chunk index,
// Object the S3 key of the compacted stream once CloseStream wrote it.
type streamHead struct {
	itemKeys
	Next      int64  `json:"next"`
	Closed    bool   `json:"closed"`
	Object    string `json:"object,omitempty"`
	ExpiresAt int64  `json:"expiresAt,omitempty"`
}

// chunkItem is one chunk of a live stream.
type chunkItem struct {
	itemKeys
	Index   int64  `json:"index"`
	Data    []byte `json:"data,omitempty"`
	DataRef string `json:"dataRef,omitempty"`
}

// dedupItem marks a queued message's DedupKey as waiting until Until (Unix
// milliseconds) or until the message is delivered. Claim names the
// Enqueue that wrote it; Sent says that its message was sent (see
// dedup.go).
type dedupItem struct {
	itemKeys
	Until     int64  `json:"until"`
	Claim     string `json:"claim"`
	Sent      bool   `json:"sent,omitempty"`
	ExpiresAt int64  `json:"expiresAt"`
}

// Items are (un)marshalled by attributevalue with the world types' json
// names, so attributes read like the JSON the rest of the project sees.
func marshalItem(v any) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMapWithOptions(v, func(o *attributevalue.EncoderOptions) { o.TagKey = "json" })
}

func unmarshalItem(m map[string]types.AttributeValue, v any) error {
	return attributevalue.UnmarshalMapWithOptions(m, v, func(o *attributevalue.DecoderOptions) { o.TagKey = "json" })
}
