package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// checkSealed holds the stack's storage of a finished order's run to the
// sealed log: no item of the table and no object of the bucket holds
// secret (the customer's name, which the order's receipt carries), the
// run records a data key wrapped by the stack's key (PayloadKeyArn), a
// client given that key reads the run's result, and one without it is
// told the payload is encrypted.
func checkSealed(t *testing.T, ctx context.Context, out map[string]string, runID, secret string, want lambdaapp.Receipt) {
	t.Helper()
	cfg := emulator.Config()
	if want.ConfirmedBy != secret {
		t.Fatalf("the receipt %+v does not carry %q: checking the storage for it would prove nothing", want, secret)
	}
	var stored [][]byte
	pages := dynamodb.NewScanPaginator(dynamodb.NewFromConfig(cfg), &dynamodb.ScanInput{TableName: aws.String(out["TableName"]), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("scanning the table: %v", err)
		}
		for _, item := range page.Items {
			stored = append(stored, itemBytes(item))
		}
	}
	items := len(stored)
	blobs := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	objects := s3.NewListObjectsV2Paginator(blobs, &s3.ListObjectsV2Input{Bucket: aws.String(out["BucketName"])})
	for objects.HasMorePages() {
		page, err := objects.NextPage(ctx)
		if err != nil {
			t.Fatalf("listing the bucket: %v", err)
		}
		for _, o := range page.Contents {
			obj, err := blobs.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(out["BucketName"]), Key: o.Key})
			if err != nil {
				t.Fatalf("reading %s: %v", aws.ToString(o.Key), err)
			}
			b, err := io.ReadAll(obj.Body)
			obj.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, b)
		}
	}
	wrapped := []byte("v1 kms " + out["PayloadKeyArn"] + " ")
	var keyed bool
	for _, b := range stored {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the stack stored %q in the clear: %.300q", secret, b)
		}
		keyed = keyed || bytes.Contains(b, wrapped)
	}
	if !keyed {
		t.Errorf("no item records a data key wrapped by the stack's key %s", out["PayloadKeyArn"])
	}
	t.Logf("%d table items and %d bucket objects, none holding the run's data in the clear", items, len(stored)-items)

	w, err := awsworld.New(cfg, awsworld.Options{Table: out["TableName"], QueueURL: out["QueueUrl"], Bucket: out["BucketName"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(awsworld.PayloadKeyEnv, out["PayloadKeyArn"])
	withKey := workflow.NewClient(w, workflow.WithPayloadCodec(awsworld.PayloadCodecFromEnv(cfg)))
	for _, c := range []struct {
		name   string
		client *workflow.Client
		check  func(lambdaapp.Receipt, error) bool
	}{
		{"given the key", withKey, func(r lambdaapp.Receipt, err error) bool { return err == nil && r == want }},
		{"without the key", workflow.NewClient(w), func(_ lambdaapp.Receipt, err error) bool {
			return err != nil && strings.Contains(err.Error(), "payload is encrypted; no key for run "+runID+" (kms "+out["PayloadKeyArn"])
		}},
	} {
		run, err := workflow.GetRun[lambdaapp.Receipt](ctx, c.client, runID)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := run.Result(ctx); !c.check(r, err) {
			t.Errorf("a client %s read %+v, %v", c.name, r, err)
		}
	}
}

// itemBytes is every string and binary value of an item, nested ones
// too, as stored.
func itemBytes(item map[string]types.AttributeValue) []byte {
	var b bytes.Buffer
	var walk func(types.AttributeValue)
	walk = func(v types.AttributeValue) {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			b.WriteString(v.Value + "\n")
		case *types.AttributeValueMemberB:
			b.Write(v.Value)
			b.WriteByte('\n')
		case *types.AttributeValueMemberM:
			for _, e := range v.Value {
				walk(e)
			}
		case *types.AttributeValueMemberL:
			for _, e := range v.Value {
				walk(e)
			}
		}
	}
	for _, v := range item {
		walk(v)
	}
	return b.Bytes()
}

// kmsAudit counts the KMS calls the deployed functions make, from
// MiniStack's CloudTrail log: recordAudit turns it on (its recording is
// off unless asked for), and it is turned off again when the test ends.
type kmsAudit struct{ since time.Time }

func recordAudit(t *testing.T, ctx context.Context) *kmsAudit {
	t.Helper()
	setAudit := func(ctx context.Context, on bool) error {
		body := fmt.Sprintf(`{"cloudtrail._recording_enabled": "%t"}`, on)
		req, err := http.NewRequestWithContext(ctx, "POST", emulator.Endpoint+"/_ministack/config", strings.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if applied, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(applied), "cloudtrail._recording_enabled") {
			return fmt.Errorf("the emulator answered %d %s", resp.StatusCode, applied)
		}
		return nil
	}
	if err := setAudit(ctx, true); err != nil {
		t.Fatalf("turning on the emulator's CloudTrail recording: %v", err)
	}
	t.Cleanup(func() {
		if err := setAudit(context.Background(), false); err != nil {
			t.Logf("turning off the emulator's CloudTrail recording: %v", err)
		}
	})
	return &kmsAudit{since: time.Now().Add(-time.Second)}
}

// calls returns the KMS calls made since the audit began under the
// encryption context of run runID, by operation.
func (a *kmsAudit) calls(t *testing.T, ctx context.Context, runID string) map[string]int {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"LookupAttributes": []map[string]string{{"AttributeKey": "EventSource", "AttributeValue": "kms.amazonaws.com"}},
		"StartTime":        a.since.Unix(),
		"MaxResults":       50,
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", emulator.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/cloudtrail/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("LookupEvents: %v", err)
	}
	defer resp.Body.Close()
	var found struct {
		Events []struct{ EventName, CloudTrailEvent string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&found); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("LookupEvents: %d, %v", resp.StatusCode, err)
	}
	if len(found.Events) == 50 {
		t.Logf("LookupEvents returned a full page: older KMS calls of the run may be missing from the count")
	}
	calls := map[string]int{}
	for _, ev := range found.Events {
		var trail struct {
			RequestParameters struct{ EncryptionContext map[string]string }
		}
		if json.Unmarshal([]byte(ev.CloudTrailEvent), &trail) == nil && trail.RequestParameters.EncryptionContext["workflow:runId"] == runID {
			calls[ev.EventName]++
		}
	}
	return calls
}
