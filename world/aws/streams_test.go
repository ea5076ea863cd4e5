package aws

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestCompactionGoesMultipart writes a stream of 9 MiB, more than one
// upload part, and closes it: the compacted object is a multipart upload,
// the chunk items are deleted, and readers see the same chunks throughout.
func TestCompactionGoesMultipart(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	var want [][]byte
	for i := range 6 {
		var batch [][]byte
		for j := range 6 {
			batch = append(batch, bytes.Repeat([]byte{byte('a' + i*6 + j)}, 256<<10))
		}
		if err := w.WriteStream(ctx, "s", batch); err != nil {
			t.Fatalf("WriteStream: %v", err)
		}
		want = append(want, batch...)
	}
	checkStream(t, w, "s", 30, want[30:], false)

	w.ResetCalls()
	if err := w.CloseStream(ctx, "s"); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	calls := w.Calls()
	if calls["S3.CreateMultipartUpload"] != 1 || calls["S3.UploadPart"] != 2 || calls["S3.CompleteMultipartUpload"] != 1 {
		t.Errorf("compacting 9 MiB made calls %v; want one multipart upload of two parts", calls)
	}
	if calls["DynamoDB.BatchWriteItem"] != 2 {
		t.Errorf("deleting 36 chunk items took %d BatchWriteItem calls, want 2", calls["DynamoDB.BatchWriteItem"])
	}
	checkStream(t, w, "s", 0, want, true)
	checkStream(t, w, "s", 35, want[35:], true)

	// The live items are gone: the head alone is left of the stream.
	items, err := w.queryRange(ctx, streamPK("s"), chunkSK(0), skChunkHead)
	if err != nil || len(items) != 1 {
		t.Fatalf("stream has %d items left after compaction, %v; want only its head", len(items), err)
	}
}

func checkStream(t *testing.T, w *World, name string, from int64, want [][]byte, wantClosed bool) {
	t.Helper()
	got, closed, err := w.ReadStream(t.Context(), name, from)
	if err != nil {
		t.Fatalf("ReadStream(%s, %d): %v", name, from, err)
	}
	if closed != wantClosed || len(got) != len(want) {
		t.Fatalf("ReadStream(%s, %d) = %d chunks, closed %v; want %d, closed %v", name, from, len(got), closed, len(want), wantClosed)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("ReadStream(%s, %d): chunk %d differs", name, from, i)
		}
	}
}

// TestConcurrentCloses closes a stream from several Worlds at once, while
// readers read it: one compaction wins, the others step aside, and every
// read sees the whole stream.
func TestConcurrentCloses(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	var want [][]byte
	for i := range 60 {
		want = append(want, fmt.Appendf(nil, "chunk %d", i))
	}
	if err := w.WriteStream(ctx, "s", want); err != nil {
		t.Fatalf("WriteStream: %v", err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := w.CloseStream(ctx, "s"); err != nil {
				t.Errorf("CloseStream: %v", err)
			}
		})
		wg.Go(func() {
			got, _, err := w.ReadStream(ctx, "s", 0)
			if err != nil || len(got) != len(want) {
				t.Errorf("ReadStream during the closes = %d chunks, %v; want %d", len(got), err, len(want))
			}
		})
	}
	wg.Wait()
	checkStream(t, w, "s", 0, want, true)
	objects, err := w.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &w.opts.Bucket})
	if err != nil || len(objects.Contents) != 1 {
		t.Fatalf("bucket holds %d objects, %v; want the one compacted stream", len(objects.Contents), err)
	}
}
