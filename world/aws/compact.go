package aws

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A compacted stream is one S3 object: a sequence of frames, each a chunk's
// length as a uvarint followed by the chunk's bytes.

// partSize is the size of a multipart upload's parts: S3 wants every part
// but the last to be at least 5 MiB. A stream smaller than one part is a
// single PutObject.
const partSize = 8 << 20

// batchWriteMax is DynamoDB's limit on the requests of one BatchWriteItem.
const batchWriteMax = 25

// errCompactedElsewhere stops a compaction that finds another CloseStream
// already compacted the stream and is deleting its chunks.
var errCompactedElsewhere = errors.New("stream compacted by another close")

// compact writes a closed stream's chunks into one S3 object unless the
// head already names one, has the head name it, and deletes the chunk
// items. Concurrent closes each write an object under a key of their own;
// the first to name its object in the head wins, and the others delete
// theirs.
func (w *World) compact(ctx context.Context, name string, head streamHead) error {
	var obj *objectWriter
	if head.Object == "" {
		obj = &objectWriter{w: w, key: "streams/" + name + "/" + rand.Text()}
	}
	var keys []itemKeys
	var refs []string
	var n int64
	err := w.queryPages(ctx, streamPK(name), chunkSK(0), chunkSK(math.MaxInt64), func(page []map[string]types.AttributeValue) error {
		for _, av := range page {
			var c chunkItem
			if err := unmarshalItem(av, &c); err != nil {
				return fmt.Errorf("decode chunk: %w", err)
			}
			keys = append(keys, c.itemKeys)
			if c.DataRef != "" {
				refs = append(refs, c.DataRef)
			}
			if obj == nil {
				continue
			}
			if c.Index != n {
				return errCompactedElsewhere
			}
			n++
			if err := w.loadBlob(ctx, c.DataRef, &c.Data); err != nil {
				return err
			}
			if err := obj.writeFrame(ctx, c.Data); err != nil {
				return err
			}
		}
		return nil
	})
	if obj != nil {
		if err == nil && n != head.Next {
			err = errCompactedElsewhere
		}
		if err != nil {
			obj.abort(ctx)
			if errors.Is(err, errCompactedElsewhere) {
				return nil
			}
			return err
		}
		if err := obj.finish(ctx); err != nil {
			return err
		}
		won, err := w.nameStreamObject(ctx, name, obj.key)
		if err != nil {
			return err
		}
		if !won {
			w.deleteObjects(ctx, []string{obj.key})
		}
	} else if err != nil {
		return err
	}
	if err := w.deleteItems(ctx, keys); err != nil {
		return err
	}
	w.deleteObjects(ctx, refs)
	return nil
}

// nameStreamObject records the compacted object in the head unless another
// close recorded one first. A refusal that shows this close's own key is
// the SDK's retry of an update whose answer was lost: it won.
func (w *World) nameStreamObject(ctx context.Context, name, key string) (bool, error) {
	held, refused, err := w.updateIf(ctx, itemKeys{PK: streamPK(name), SK: skChunkHead}.key(),
		expression.Set(expression.Name("object"), expression.Value(key)),
		expression.AttributeNotExists(expression.Name("object")))
	if !refused {
		return err == nil, err
	}
	var head streamHead
	if err := unmarshalItem(held, &head); err != nil {
		return false, fmt.Errorf("decode stream head: %w", err)
	}
	return head.Object == key, nil
}

// deleteItems deletes items in batches.
func (w *World) deleteItems(ctx context.Context, keys []itemKeys) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.key()}}
	}
	if err := w.batchWrite(ctx, reqs); err != nil {
		return fmt.Errorf("delete chunk items: %w", err)
	}
	return nil
}

// readCompacted reads a compacted stream's chunks.
func (w *World) readCompacted(ctx context.Context, key string) ([][]byte, error) {
	b, err := w.getObject(ctx, key)
	if err != nil {
		return nil, err
	}
	var chunks [][]byte
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("compacted stream %s: bad frame at chunk %d", key, len(chunks))
		}
		chunks = append(chunks, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return chunks, nil
}

// objectWriter writes an S3 object a frame at a time, as a single put if
// it stays under one part and as a multipart upload if it grows past.
type objectWriter struct {
	w        *World
	key      string
	buf      []byte
	uploadID *string
	parts    []s3types.CompletedPart
}

func (o *objectWriter) writeFrame(ctx context.Context, chunk []byte) error {
	o.buf = binary.AppendUvarint(o.buf, uint64(len(chunk)))
	o.buf = append(o.buf, chunk...)
	if len(o.buf) >= partSize {
		return o.uploadPart(ctx)
	}
	return nil
}

func (o *objectWriter) uploadPart(ctx context.Context) error {
	s := o.w.s3
	if o.uploadID == nil {
		out, err := s.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &o.w.opts.Bucket, Key: &o.key, Tagging: uploadTagging(o.key)})
		if err != nil {
			return fmt.Errorf("start upload of %s: %w", o.key, err)
		}
		o.uploadID = out.UploadId
	}
	number := aws.Int32(int32(len(o.parts) + 1))
	out, err := s.UploadPart(ctx, &s3.UploadPartInput{
		Bucket: &o.w.opts.Bucket, Key: &o.key, UploadId: o.uploadID, PartNumber: number, Body: bytes.NewReader(o.buf),
	})
	if err != nil {
		return fmt.Errorf("upload part %d of %s: %w", *number, o.key, err)
	}
	o.parts = append(o.parts, s3types.CompletedPart{
		PartNumber: number, ETag: out.ETag,
		ChecksumCRC32: out.ChecksumCRC32, ChecksumCRC32C: out.ChecksumCRC32C, ChecksumCRC64NVME: out.ChecksumCRC64NVME,
		ChecksumSHA1: out.ChecksumSHA1, ChecksumSHA256: out.ChecksumSHA256,
	})
	o.buf = o.buf[:0]
	return nil
}

func (o *objectWriter) finish(ctx context.Context) error {
	if o.uploadID == nil {
		return o.w.putObject(ctx, o.key, o.buf)
	}
	if len(o.buf) > 0 {
		if err := o.uploadPart(ctx); err != nil {
			o.abort(ctx)
			return err
		}
	}
	_, err := o.w.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &o.w.opts.Bucket, Key: &o.key, UploadId: o.uploadID,
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: o.parts},
	})
	if err != nil {
		o.abort(ctx)
		return fmt.Errorf("complete upload of %s: %w", o.key, err)
	}
	return nil
}

// abort drops an unfinished multipart upload. It is best effort: the
// bucket's lifecycle rule aborts what is left behind.
func (o *objectWriter) abort(ctx context.Context) {
	if o.uploadID != nil {
		_, _ = o.w.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &o.w.opts.Bucket, Key: &o.key, UploadId: o.uploadID})
	}
}
