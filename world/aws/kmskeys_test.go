package aws

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
)

var kmsEcho = workflow.DefineStep("aws.kmsEcho", func(_ context.Context, s string) (string, error) {
	return s + " " + strings.Repeat("approved ", 60), nil // long enough to compress
})

var kmsFlow = workflow.Define("aws.kmsSealed", func(ctx workflow.Context, s string) (string, error) {
	return kmsEcho.Call(ctx, s)
})

// newKMSKey creates a symmetric key in the emulator's KMS.
func newKMSKey(t *testing.T, cfg aws.Config) string {
	t.Helper()
	out, err := kms.NewFromConfig(cfg).CreateKey(t.Context(), &kms.CreateKeyInput{Description: aws.String("workflow payload test")})
	if err != nil {
		t.Fatalf("kms CreateKey: %v", err)
	}
	return aws.ToString(out.KeyMetadata.Arn)
}

func kmsChain(keys *KMSKeys) *codec.Chain {
	return codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: keys})
}

// sealedKMSRun runs kmsFlow to its end on w with chain, and checks its result.
func sealedKMSRun(t *testing.T, w *World, chain *codec.Chain, secret string) *workflow.Run[string] {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	t.Cleanup(stop)
	go func() { _ = workflow.NewWorker(w, workflow.WorkerOptions{Codec: chain}).Run(ctx) }()
	run, err := workflow.Start(ctx, workflow.NewClient(w, workflow.WithPayloadCodec(chain)), kmsFlow, secret)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); err != nil || !strings.HasPrefix(out, secret+" approved") {
		t.Fatalf("result %.40q, %v", out, err)
	}
	return run
}

// runItems returns every DynamoDB item of a run's partition, as stored.
func runItems(t *testing.T, w *World, runID string) []map[string]types.AttributeValue {
	t.Helper()
	out, err := w.ddb.Query(t.Context(), &dynamodb.QueryInput{
		TableName: &w.opts.Table, KeyConditionExpression: aws.String("pk = :pk"), ConsistentRead: aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: runPK(runID)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Items
}

// contains reports whether any attribute of the items holds s.
func contains(items []map[string]types.AttributeValue, s string) bool {
	for _, item := range items {
		for _, v := range item {
			switch v := v.(type) {
			case *types.AttributeValueMemberS:
				if strings.Contains(v.Value, s) {
					return true
				}
			case *types.AttributeValueMemberB:
				if bytes.Contains(v.Value, []byte(s)) {
					return true
				}
			}
		}
	}
	return false
}

// TestKMSSealedRun seals a run under a KMS key of the emulator: its items
// in DynamoDB hold none of its data, the key is asked for once per run
// and reader, a reader without the key says so, and a flipped byte of
// the stored output fails its reader with ErrTampered.
func TestKMSSealedRun(t *testing.T) {
	cfg := emulatorConfig(t)
	w := newTestWorld(t)
	keys := NewKMSKeys(cfg, newKMSKey(t, cfg))
	const secret = "iban-DE89-3704-0044"
	run := sealedKMSRun(t, w, kmsChain(keys), secret)
	items := runItems(t, w, run.ID)
	if len(items) < 4 || contains(items, "DE89") || contains(items, "approved") {
		t.Fatalf("%d items; the run's data in the clear: %v", len(items), contains(items, "DE89"))
	}
	if attrs, err := run.Attributes(t.Context()); err != nil || !strings.HasPrefix(attrs["$codec"], "v1 kms arn:") {
		t.Fatalf("the run records no KMS-wrapped key: %.60q, %v", attrs["$codec"], err)
	}
	if plain := sealedKMSRun(t, w, nil, secret); !contains(runItems(t, w, plain.ID), "DE89") {
		t.Fatal("a plain run's items do not hold its data either: the check above proves nothing")
	}
	if gen, dec := keys.Requests(); gen != 1 || dec != 0 {
		t.Fatalf("%d GenerateDataKey and %d Decrypt for one run in one process; want 1 and 0 (the chain caches the key it made)", gen, dec)
	}

	// Another process: one Decrypt, however often it reads.
	readerKeys := NewKMSKeys(cfg, "unused")
	reader := workflow.NewClient(w, workflow.WithPayloadCodec(kmsChain(readerKeys)))
	for range 3 {
		again, err := workflow.GetRun[string](t.Context(), reader, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := again.Result(t.Context()); err != nil || !strings.HasPrefix(out, secret) {
			t.Fatalf("another reader: %.30q, %v", out, err)
		}
	}
	if _, dec := readerKeys.Requests(); dec != 1 {
		t.Fatalf("%d Decrypt calls for three reads of one run; want 1", dec)
	}

	// No codecs: a clear error, not the ciphertext.
	plain, _ := workflow.GetRun[string](t.Context(), workflow.NewClient(w), run.ID)
	if _, err := plain.Result(t.Context()); !strings.Contains(fmtErr(err), "payload is encrypted; no key for run "+run.ID+" (kms arn:") {
		t.Fatalf("reader without codecs: %v", err)
	}

	// A flipped byte of the stored output.
	item, err := w.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &w.opts.Table, Key: itemKeys{runPK(run.ID), skRun}.key()})
	if err != nil {
		t.Fatal(err)
	}
	out := item.Item["output"].(*types.AttributeValueMemberB)
	at := bytes.Index(out.Value, []byte(`":"`)) + 12
	out.Value[at] ^= 'A' ^ 'B'
	if _, err := w.ddb.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &w.opts.Table, Item: item.Item}); err != nil {
		t.Fatal(err)
	}
	fresh, _ := workflow.GetRun[string](t.Context(), reader, run.ID)
	if got, err := fresh.Result(t.Context()); !errors.Is(err, codec.ErrTampered) {
		t.Fatalf("Result of a flipped output = %.30q, %v; want ErrTampered", got, err)
	}
}

// TestKMSKeyChange moves new runs to another KMS key: a chain configured
// with the new key still reads the runs of the old one, whose wrapped
// keys name it, and a wrapped key copied to another run does not decrypt.
func TestKMSKeyChange(t *testing.T) {
	cfg := emulatorConfig(t)
	w := newTestWorld(t)
	oldKey, newKey := newKMSKey(t, cfg), newKMSKey(t, cfg)
	oldRun := sealedKMSRun(t, w, kmsChain(NewKMSKeys(cfg, oldKey)), "before")
	newRun := sealedKMSRun(t, w, kmsChain(NewKMSKeys(cfg, newKey)), "after")
	reader := workflow.NewClient(w, workflow.WithPayloadCodec(kmsChain(NewKMSKeys(cfg, newKey))))
	for run, want := range map[*workflow.Run[string]]string{oldRun: oldKey, newRun: newKey} {
		attrs, err := run.Attributes(t.Context())
		if err != nil || !strings.HasPrefix(attrs["$codec"], "v1 kms "+want+" ") {
			t.Errorf("run %s: $codec %.80q, want key %s", run.ID, attrs["$codec"], want)
		}
		again, _ := workflow.GetRun[string](t.Context(), reader, run.ID)
		if _, err := again.Result(t.Context()); err != nil {
			t.Errorf("run %s under the new configuration: %v", run.ID, err)
		}
	}
	attrs, _ := oldRun.Attributes(t.Context())
	wrapped := strings.TrimPrefix(attrs["$codec"], "v1 kms ")
	if _, err := NewKMSKeys(cfg, newKey).DecryptKey(t.Context(), newRun.ID, wrapped); err == nil {
		t.Error("KMS decrypted one run's data key for another run (encryption context ignored)")
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
