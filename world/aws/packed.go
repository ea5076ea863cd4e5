package aws

import (
	"context"
	"fmt"
	"slices"

	"github.com/lambdaworkflow/workflow/world"
)

// An append is one transaction, and a transaction holds at most 100
// items: two go to the log head and the run, so 98 events fit one item
// each. A larger append (a wide fan-out's join: three events a branch)
// packs up to maxPacked consecutive events into each item, keyed by the
// slot of its last event, the others in its Before, so that it still
// commits at once instead of in transactions one after the other, each
// a write latency. An append that fits keeps one event per item, and the
// logs written before packing read as they did: an item without Before
// is one event. Keyed by its last slot, a packed item is within every
// read of the log from a slot it holds (a read from slot s starts at key
// s, and the item's key is at or after it); the events it holds before
// that slot are dropped.

// maxPacked is the most events one item holds. Each shares the item's
// 400 KB: a payload over eventBlobLimit/maxPacked in a packed item goes
// to S3.
const maxPacked = 4

var _ world.AppendLimiter = (*World)(nil)

// MaxAppend implements world.AppendLimiter: the most events one AppendEvents, AppendLeased or
// AppendFolded without messages takes.
func (w *World) MaxAppend() int { return maxPacked * (maxTransactItems - 2) }

// newEventItems numbers events from slot from of run runID, perItem to an
// item.
func newEventItems(runID string, from int64, events []world.Event, perItem int) []eventItem {
	items := make([]eventItem, 0, (len(events)+perItem-1)/perItem)
	for start := 0; start < len(events); start += perItem {
		group := slices.Clone(events[start:min(start+perItem, len(events))])
		for i := range group {
			group[i].RunID, group[i].Slot = runID, from+int64(start+i)
		}
		last := group[len(group)-1]
		item := eventItem{itemKeys: itemKeys{PK: runPK(runID), SK: eventSK(last.Slot)}, Event: last}
		for _, ev := range group[:len(group)-1] {
			item.Before = append(item.Before, packedEvent{Event: ev})
		}
		items = append(items, item)
	}
	return items
}

// eventBlobs are the payloads of items' events, each allowed its share of
// its item.
func eventBlobs(items []eventItem) []blob {
	var blobs []blob
	for i := range items {
		item := &items[i]
		limit := eventBlobLimit / (len(item.Before) + 1)
		for j := range item.Before {
			blobs = append(blobs, blob{Data: (*[]byte)(&item.Before[j].Payload), Ref: &item.Before[j].PayloadRef, limit: limit})
		}
		blobs = append(blobs, blob{Data: (*[]byte)(&item.Payload), Ref: &item.PayloadRef, limit: limit})
	}
	return blobs
}

// decodeEvents decodes a log's event items into its events at slots after
// after, fetching the payloads kept in S3.
func (w *World) decodeEvents(ctx context.Context, runID string, after int64, avs []ddbItem) ([]world.Event, error) {
	var events []world.Event
	for _, av := range avs {
		var item eventItem
		if err := unmarshalItem(av, &item); err != nil {
			return nil, fmt.Errorf("events of run %s: decode: %w", runID, err)
		}
		if eventSK(item.Slot) != item.SK {
			// An item written by something other than this World: handing
			// it on would send a writer round the same slot for ever.
			return nil, fmt.Errorf("events of run %s: the item at %s holds slot %d: the log is corrupt", runID, item.SK, item.Slot)
		}
		held := append(item.Before, packedEvent{Event: item.Event, PayloadRef: item.PayloadRef})
		for i, p := range held {
			if want := item.Slot - int64(len(held)-1-i); p.Slot != want {
				return nil, fmt.Errorf("events of run %s: the item at %s holds slot %d where slot %d belongs: the log is corrupt", runID, item.SK, p.Slot, want)
			}
			if p.Slot <= after {
				continue
			}
			if err := w.loadBlob(ctx, p.PayloadRef, (*[]byte)(&p.Payload)); err != nil {
				return nil, fmt.Errorf("events of run %s: %w", runID, err)
			}
			events = append(events, p.Event)
		}
	}
	return events, nil
}
