package aws

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// DynamoDB caps an item at 400 KB and a transaction at 4 MB (MiniStack
// counts the latter on the JSON request, where binary grows by a third).
// Payloads over these limits go to S3 and the item keeps the object's key.
const (
	// eventBlobLimit is the largest payload kept inside an event or chunk
	// item, which has little else in it.
	eventBlobLimit = 350 << 10
	// runBlobLimit is the largest Input, Output or Error kept inside a run
	// item: three of them plus attributes must stay under 400 KB, and an
	// update cannot see what the item already holds.
	runBlobLimit = 100 << 10
	// transactBudget bounds the payload bytes one transaction carries inline.
	transactBudget = 2 << 20
)

// blob is one payload headed for an item: Data stays inline unless place
// moves it to S3, emptying Data and setting Ref.
type blob struct {
	Data  *[]byte
	Ref   *string
	limit int
}

// placeBlobs moves to S3 every blob over its limit, then the largest ones
// until the inline total fits budget. It returns the keys it wrote, so a
// refused write can delete them again. Keys are random: a writer that loses
// a race must not overwrite the winner's payload.
func (w *World) placeBlobs(ctx context.Context, prefix string, budget int, blobs []blob) ([]string, error) {
	var inline []blob
	total := 0
	var keys []string
	upload := func(b blob) error {
		key := "blobs/" + prefix + "/" + rand.Text()
		if err := w.putObject(ctx, key, *b.Data); err != nil {
			return err
		}
		keys = append(keys, key)
		*b.Ref, *b.Data = key, nil
		return nil
	}
	for _, b := range blobs {
		if len(*b.Data) > b.limit {
			if err := upload(b); err != nil {
				return keys, err
			}
			continue
		}
		inline = append(inline, b)
		total += len(*b.Data)
	}
	slices.SortFunc(inline, func(a, b blob) int { return cmp.Compare(len(*b.Data), len(*a.Data)) })
	for _, b := range inline {
		if total <= budget {
			break
		}
		total -= len(*b.Data)
		if err := upload(b); err != nil {
			return keys, err
		}
	}
	return keys, nil
}

// loadBlob fills data from S3 when ref names an object.
func (w *World) loadBlob(ctx context.Context, ref string, data *[]byte) error {
	if ref == "" {
		return nil
	}
	b, err := w.getObject(ctx, ref)
	if err != nil {
		return err
	}
	*data = b
	return nil
}

// deleteObjects removes objects a refused write no longer needs. It is best
// effort: an object left behind is only storage.
func (w *World) deleteObjects(ctx context.Context, keys []string) {
	for _, k := range keys {
		_, _ = w.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &w.opts.Bucket, Key: aws.String(k)})
	}
}

func (w *World) putObject(ctx context.Context, key string, data []byte) error {
	_, err := w.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &w.opts.Bucket, Key: aws.String(key), Body: bytes.NewReader(data), Tagging: uploadTagging(key),
	})
	if err != nil {
		return fmt.Errorf("put s3 object %s: %w", key, err)
	}
	return nil
}

func (w *World) getObject(ctx context.Context, key string) ([]byte, error) {
	out, err := w.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &w.opts.Bucket, Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("get s3 object %s: %w", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("read s3 object %s: %w", key, err)
	}
	return b, nil
}
