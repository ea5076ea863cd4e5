package faultproxy_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// fixture is a table, queue and bucket of the test's own, and a proxy in
// front of the emulator.
type fixture struct {
	proxy  *faultproxy.Proxy
	opts   awsworld.Options
	direct aws.Config // straight to the emulator
	via    aws.Config // through the proxy
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	direct := emulator.Require(t)
	name := "wf-proxy-" + strings.ToLower(rand.Text())
	opts, err := awsworld.Bootstrap(t.Context(), direct, awsworld.Names{Table: name, Queue: name, Bucket: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = dynamodb.NewFromConfig(direct).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &opts.Table})
		_, _ = sqs.NewFromConfig(direct).DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &opts.QueueURL})
		_, _ = s3.NewFromConfig(direct, func(o *s3.Options) { o.UsePathStyle = true }).DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &opts.Bucket})
	})
	p, err := faultproxy.Start(t.Context(), emulator.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	via := direct.Copy()
	via.BaseEndpoint = aws.String(p.URL())
	via.RetryMaxAttempts = 1 // show each answer as it comes
	return fixture{proxy: p, opts: opts, direct: direct, via: via}
}

func (f fixture) putItem(cfg aws.Config, pk string) error {
	_, err := dynamodb.NewFromConfig(cfg).PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: &f.opts.Table,
		Item:      map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "x"}},
	})
	return err
}

func (f fixture) itemExists(t *testing.T, pk string) bool {
	t.Helper()
	out, err := dynamodb.NewFromConfig(f.direct).GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName:      &f.opts.Table,
		Key:            map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "x"}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item != nil
}

// TestCountsWhatTheWorldWrites drives a World through the proxy: the proxy
// counts exactly the write calls the World's own call counter reports, and
// no read.
func TestCountsWhatTheWorldWrites(t *testing.T) {
	f := newFixture(t)
	w, err := awsworld.New(f.via, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := time.Now()
	if _, err := w.CreateRun(ctx, world.Run{ID: "r", Workflow: "wf", Status: world.StatusPending, CreatedAt: now, UpdatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.GetRun(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if err := w.Enqueue(ctx, world.Message{RunID: "r", DedupKey: "r/k"}); err != nil {
		t.Fatal(err)
	}
	d, err := w.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}

	counted := map[string]int64{}
	for _, c := range f.proxy.Writes() {
		counted[c.String()]++
	}
	for op, n := range w.Calls() {
		isWrite := !strings.HasSuffix(op, "GetItem") && !strings.HasSuffix(op, "Query") && !strings.HasSuffix(op, "ReceiveMessage")
		if isWrite && counted[op] != n {
			t.Errorf("%s: the World sent %d, the proxy counted %d writes", op, n, counted[op])
		}
		if !isWrite && counted[op] != 0 {
			t.Errorf("%s is a read, counted as a write %d times", op, counted[op])
		}
	}
	if len(counted) == 0 {
		t.Fatal("no writes counted")
	}
}

// TestKillBeforeAnswer: the write is carried out, the kill runs, and the
// caller gets no answer.
func TestKillBeforeAnswer(t *testing.T) {
	f := newFixture(t)
	var killed atomic.Bool
	f.proxy.KillAfter(1, faultproxy.BeforeAnswer, func() { killed.Store(true) })
	if err := f.putItem(f.via, "a"); err == nil {
		t.Error("the write was answered")
	}
	if !killed.Load() {
		t.Error("the kill did not run")
	}
	if !f.itemExists(t, "a") {
		t.Error("the write was not carried out")
	}
}

// TestKillAfterAnswer: the nth write counted from KillAfter is answered,
// then the kill runs, once; nothing passes after it until Resume.
func TestKillAfterAnswer(t *testing.T) {
	f := newFixture(t)
	if err := f.putItem(f.via, "before"); err != nil {
		t.Fatal(err)
	}
	var kills atomic.Int32
	killed := make(chan struct{})
	f.proxy.KillAfter(2, faultproxy.AfterAnswer, func() { kills.Add(1); close(killed) })
	if err := f.putItem(f.via, "a"); err != nil || kills.Load() != 0 {
		t.Fatalf("write 1: %v, %d kills", err, kills.Load())
	}
	if err := f.putItem(f.via, "b"); err != nil {
		t.Fatalf("write 2: %v", err)
	}
	select { // the kill follows the answer
	case <-killed:
	case <-time.After(10 * time.Second):
		t.Fatal("no kill after write 2")
	}
	if err := f.putItem(f.via, "c"); err == nil || f.itemExists(t, "c") {
		t.Errorf("a write after the kill passed (%v)", err)
	}
	f.proxy.Resume()
	if err := f.putItem(f.via, "d"); err != nil || !f.itemExists(t, "d") {
		t.Errorf("a write after Resume: %v", err)
	}
	if kills.Load() != 1 {
		t.Errorf("%d kills, want 1", kills.Load())
	}
	if got := len(f.proxy.Writes()); got != 4 {
		t.Errorf("%d writes counted, want 4 (before, a, b, d)", got)
	}
}

// TestThrottleLooksLikeDynamoDB: a throttled write is refused with the
// errors DynamoDB sends, in turn, which the SDK decodes as such and its
// retryer takes for throttling; it is not carried out, and reads pass.
func TestThrottleLooksLikeDynamoDB(t *testing.T) {
	f := newFixture(t)
	f.proxy.Inject(faultproxy.Storm{Match: faultproxy.DynamoDBWrites, Rate: 1, For: time.Minute, Answer: faultproxy.Throttle})
	codes := map[string]bool{}
	for _, pk := range []string{"a", "b"} {
		err := f.putItem(f.via, pk)
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("write %s: %v, want an API error", pk, err)
		}
		codes[apiErr.ErrorCode()] = true
		var provisioned *types.ProvisionedThroughputExceededException
		if apiErr.ErrorCode() == "ProvisionedThroughputExceededException" && !errors.As(err, &provisioned) {
			t.Errorf("the SDK did not decode %v as its own type", err)
		}
		if retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) != aws.TrueTernary {
			t.Errorf("the SDK does not take %v for throttling", err)
		}
		if f.itemExists(t, pk) { // a read, through the emulator directly
			t.Errorf("throttled write %s was carried out", pk)
		}
	}
	if !codes["ThrottlingException"] || !codes["ProvisionedThroughputExceededException"] {
		t.Errorf("codes %v, want both throttling codes", codes)
	}
	_, err := dynamodb.NewFromConfig(f.via).GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &f.opts.Table,
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "x"}},
	})
	if err != nil {
		t.Errorf("a read through the storm: %v", err)
	}
}

// TestServerErrorsForAWhile: SQS sends answer HTTP 500 while the storm
// lasts, and pass once it is over.
func TestServerErrorsForAWhile(t *testing.T) {
	f := newFixture(t)
	storm := 300 * time.Millisecond
	f.proxy.Inject(faultproxy.Storm{Match: func(c faultproxy.Call) bool { return c.Service == "SQS" }, Rate: 1, For: storm, Answer: faultproxy.ServerError})
	q := sqs.NewFromConfig(f.via)
	send := func() error {
		_, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &f.opts.QueueURL, MessageBody: aws.String("{}")})
		return err
	}
	var resp *awshttp.ResponseError
	if err := send(); !errors.As(err, &resp) || resp.HTTPStatusCode() != http.StatusInternalServerError {
		t.Fatalf("during the storm: %v, want HTTP 500", err)
	}
	time.Sleep(storm + 100*time.Millisecond)
	if err := send(); err != nil {
		t.Fatalf("after the storm: %v", err)
	}
}

// TestLostAnswerIsCarriedOut: a write whose answer is lost is carried out
// and counted, and its caller gets HTTP 500.
func TestLostAnswerIsCarriedOut(t *testing.T) {
	f := newFixture(t)
	f.proxy.Inject(faultproxy.Storm{Match: faultproxy.Writes, Rate: 1, For: time.Minute, Answer: faultproxy.LostAnswer})
	var resp *awshttp.ResponseError
	if err := f.putItem(f.via, "a"); !errors.As(err, &resp) || resp.HTTPStatusCode() != http.StatusInternalServerError {
		t.Errorf("a write whose answer was lost: %v, want HTTP 500", err)
	}
	if !f.itemExists(t, "a") {
		t.Error("the write was not carried out")
	}
	if w, n := f.proxy.Writes(), f.proxy.Faults(); len(w) != 1 || n != 1 {
		t.Errorf("%d writes, %d faults counted; want 1 and 1", len(w), n)
	}
}
