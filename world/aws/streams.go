package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// A stream lives in DynamoDB while it is written: one item per chunk and a
// head item after them (see doc.go). CloseStream compacts it into one S3
// object, which the head then names, and deletes the chunk items.

// appendRounds bounds how often one append re-reads the head after other
// writers moved it; each round means another writer appended.
const appendRounds = 100

// streamCacheSize bounds the World's memory of streams' next indexes.
const streamCacheSize = 4096

// WriteStream implements world.Streams. Each transaction appends up to 99
// chunks and moves the head on condition that it is where the writer
// thought; a refusal returns the head, which says where it is or that the
// stream is closed.
func (w *World) WriteStream(ctx context.Context, name string, chunks [][]byte) error {
	for len(chunks) > 0 {
		n := min(len(chunks), maxTransactItems-1)
		if err := w.appendChunks(ctx, name, chunks[:n]); err != nil {
			return err
		}
		chunks = chunks[n:]
	}
	return nil
}

func (w *World) appendChunks(ctx context.Context, name string, chunks [][]byte) error {
	items := make([]chunkItem, len(chunks))
	blobs := make([]blob, len(chunks))
	for i, c := range chunks {
		items[i].Data = c
		blobs[i] = blob{Data: &items[i].Data, Ref: &items[i].DataRef, limit: eventBlobLimit}
	}
	keys, err := w.placeBlobs(ctx, "streams/"+name, transactBudget, blobs)
	if err != nil {
		w.deleteObjects(ctx, keys)
		return fmt.Errorf("write stream %s: %w", name, err)
	}
	next := w.cachedNext(name)
	for range appendRounds {
		writes, err := w.chunkWrites(name, next, items)
		if err != nil {
			return fmt.Errorf("write stream %s: %w", name, err)
		}
		err = w.transact(ctx, writes)
		reasons, cancelled := cancelReasons(err)
		headRefused, old := refused(reasons, len(items))
		switch {
		case err == nil:
			w.rememberNext(name, next+int64(len(items)))
			if w.events != nil {
				w.events.publish(ctx, name, announcement{Next: next + int64(len(items))})
			}
			return nil
		case !cancelled || !headRefused:
			w.deleteObjects(ctx, keys)
			return fmt.Errorf("write stream %s: %w", name, err)
		}
		var head streamHead
		if err := unmarshalItem(old, &head); err != nil {
			return fmt.Errorf("write stream %s: decode head: %w", name, err)
		}
		if head.Closed {
			w.deleteObjects(ctx, keys)
			return fmt.Errorf("write stream %s: %w", name, world.ErrStreamClosed)
		}
		next = head.Next
	}
	w.deleteObjects(ctx, keys)
	return fmt.Errorf("write stream %s: the stream moved %d times under one append", name, appendRounds)
}

// chunkWrites returns the transaction that puts items at indexes next,
// next+1, ... and then moves the head past them.
func (w *World) chunkWrites(name string, next int64, items []chunkItem) ([]types.TransactWriteItem, error) {
	var writes []types.TransactWriteItem
	for i := range items {
		items[i].itemKeys = itemKeys{PK: streamPK(name), SK: chunkSK(next + int64(i))}
		items[i].Index = next + int64(i)
		av, err := marshalItem(&items[i])
		if err != nil {
			return nil, err
		}
		writes = append(writes, w.conditionalPut(av))
	}
	at := expression.Name("next").Equal(expression.Value(next)).And(expression.Name("closed").Equal(expression.Value(false)))
	if next == 0 {
		at = expression.AttributeNotExists(expression.Name(attrPK)).Or(at)
	}
	e, err := expression.NewBuilder().WithCondition(at).WithUpdate(
		expression.Set(expression.Name("next"), expression.Value(next+int64(len(items)))).
			Set(expression.Name("closed"), expression.Value(false)),
	).Build()
	if err != nil {
		return nil, err
	}
	return append(writes, types.TransactWriteItem{Update: &types.Update{
		TableName:                           &w.opts.Table,
		Key:                                 itemKeys{PK: streamPK(name), SK: skChunkHead}.key(),
		UpdateExpression:                    e.Update(),
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}), nil
}

// readRounds bounds how often ReadStream reads again after catching a
// compaction half done.
const readRounds = 3

// ReadStream implements world.Streams with one consistent Query from chunk
// from through the head. The head comes last, so a head that says closed
// was read after every chunk written before the close; if the chunks read
// fall short of it, a compaction deleted them meanwhile and the next read
// finds the head naming the compacted object.
func (w *World) ReadStream(ctx context.Context, name string, from int64) ([][]byte, bool, error) {
	from = max(from, 0)
	for range readRounds {
		avs, err := w.queryRange(ctx, streamPK(name), chunkSK(from), skChunkHead)
		if err != nil {
			return nil, false, fmt.Errorf("read stream %s: %w", name, err)
		}
		if len(avs) == 0 || !isItem(avs[len(avs)-1], skChunkHead) || w.expired(expiresAt(avs[len(avs)-1])) {
			return nil, false, nil
		}
		var head streamHead
		if err := unmarshalItem(avs[len(avs)-1], &head); err != nil {
			return nil, false, fmt.Errorf("read stream %s: decode head: %w", name, err)
		}
		if head.Object != "" {
			chunks, err := w.readCompacted(ctx, head.Object)
			if err != nil {
				return nil, false, fmt.Errorf("read stream %s: %w", name, err)
			}
			return chunks[min(from, int64(len(chunks))):], true, nil
		}
		chunks, complete, err := w.liveChunks(ctx, avs[:len(avs)-1], from)
		if err != nil {
			return nil, false, fmt.Errorf("read stream %s: %w", name, err)
		}
		if complete && (!head.Closed || from+int64(len(chunks)) >= head.Next) {
			return chunks, head.Closed, nil
		}
	}
	return nil, false, fmt.Errorf("read stream %s: still being compacted after %d reads", name, readRounds)
}

// liveChunks decodes chunk items read from index from, and reports whether
// they run on without a gap.
func (w *World) liveChunks(ctx context.Context, avs []map[string]types.AttributeValue, from int64) ([][]byte, bool, error) {
	var chunks [][]byte
	for i, av := range avs {
		var c chunkItem
		if err := unmarshalItem(av, &c); err != nil {
			return nil, false, fmt.Errorf("decode chunk: %w", err)
		}
		if c.Index != from+int64(i) {
			return nil, false, nil
		}
		if err := w.loadBlob(ctx, c.DataRef, &c.Data); err != nil {
			return nil, false, err
		}
		chunks = append(chunks, nonNil(c.Data))
	}
	return chunks, true, nil
}

// nonNil keeps an empty chunk empty rather than nil, as it was written.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CloseStream implements world.Streams: it marks the head closed, which
// refuses later writes, then compacts the chunks into one S3 object and
// deletes their items. A close that finds the object already written only
// finishes the deleting, so closing again, or after a crash, is harmless,
// and completes what an interrupted close left.
func (w *World) CloseStream(ctx context.Context, name string) error {
	w.forgetNext(name)
	closing := expression.Set(expression.Name("closed"), expression.Value(true)).
		Set(expression.Name("next"), expression.IfNotExists(expression.Name("next"), expression.Value(0)))
	if !world.IsRunStream(name) {
		// A reply: kept for its caller a while after its first close. A
		// run's streams expire with the run (ExpireRun).
		expires := w.now().Add(world.ReplyRetention).Unix()
		closing = closing.Set(expression.Name(attrExpiresAt), expression.IfNotExists(expression.Name(attrExpiresAt), expression.Value(expires)))
	}
	e, err := expression.NewBuilder().WithUpdate(closing).Build()
	if err != nil {
		return fmt.Errorf("close stream %s: %w", name, err)
	}
	out, err := w.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &w.opts.Table,
		Key:                       itemKeys{PK: streamPK(name), SK: skChunkHead}.key(),
		UpdateExpression:          e.Update(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return fmt.Errorf("close stream %s: %w", name, err)
	}
	var head streamHead
	if err := unmarshalItem(out.Attributes, &head); err != nil {
		return fmt.Errorf("close stream %s: decode head: %w", name, err)
	}
	if w.events != nil {
		w.events.publish(ctx, name, announcement{Next: head.Next, Closed: true})
	}
	if head.Next == 0 {
		return nil
	}
	// The stream is closed once its head says so. A compaction cut short
	// because the caller stopped waiting is left to the next CloseStream;
	// readers read the chunk items meanwhile.
	if err := w.compact(ctx, name, head); err != nil && ctx.Err() == nil {
		return fmt.Errorf("close stream %s: %w", name, err)
	}
	return nil
}

func (w *World) cachedNext(name string) int64 {
	w.streamMu.Lock()
	defer w.streamMu.Unlock()
	return w.streamNext[name]
}

func (w *World) rememberNext(name string, next int64) {
	w.streamMu.Lock()
	defer w.streamMu.Unlock()
	if len(w.streamNext) >= streamCacheSize {
		clear(w.streamNext)
	}
	w.streamNext[name] = max(w.streamNext[name], next)
}

func (w *World) forgetNext(name string) {
	w.streamMu.Lock()
	defer w.streamMu.Unlock()
	delete(w.streamNext, name)
}
