package aws

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

// TestRetention holds the World to the shared rule on a clock of the
// test's own: its readers treat an item past expiresAt as gone, whether or
// not TTL (which MiniStack runs every 60 s, AWS within days) deleted it.
func TestRetention(t *testing.T) {
	emulatorConfig(t)
	worldtest.Retention(t, func(t *testing.T, retention time.Duration, clock *worldtest.Clock) world.World {
		w := newTestWorld(t)
		w.retention, w.now = world.RetentionOrDefault(retention), clock.Now
		return w
	})
}

var awsStreamer = workflow.Define("aws-test.streamer", func(ctx workflow.Context, steps int) (int, error) {
	n := 0
	for range steps {
		var err error
		if n, err = awsStreamStep.Call(ctx, n); err != nil {
			return 0, err
		}
	}
	return n, nil
})

var awsStreamStep = workflow.DefineStep("aws-test.stream-step", func(ctx context.Context, n int) (int, error) {
	w, err := workflow.Writer[int](ctx, "")
	if err != nil {
		return 0, err
	}
	if err := w.Write(n); err != nil {
		return 0, err
	}
	return n + 1, w.Flush()
})

// Every item a finished run leaves in the table carries expiresAt, set to
// the same time, and no item of a running run does; the finishing
// invocation's extra calls are counted.
func TestFinishedRunItemsExpire(t *testing.T) {
	w := newTestWorld(t)
	ctx := context.Background()
	c := workflow.NewClient(w)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	finished, err := workflow.Start(ctx, c, awsStreamer, 40)
	if err != nil {
		t.Fatal(err)
	}
	w.ResetCalls()
	if err := worker.Process(ctx, finished.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := finished.Result(ctx); err != nil || got != 40 {
		t.Fatalf("got %d, %v", got, err)
	}
	calls := w.Calls()
	t.Logf("a 40-step run's invocation: %v", calls)
	// 40 steps write 121 events, 3 of them in the terminal append: 118 to
	// stamp, in 5 BatchWriteItems.
	if n := calls["DynamoDB.BatchWriteItem"]; n < 5 {
		t.Errorf("%d BatchWriteItem, want at least the 5 that stamp 118 events", n)
	}
	running, err := workflow.Start(ctx, c, awsWaiter, "aws-test-retention:"+finished.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, running.ID); err != nil {
		t.Fatal(err)
	}

	items := scanTable(t, w)
	var expiry int64
	counted := map[string]int{}
	for pk, av := range items {
		at := expiresAt(av)
		switch {
		case strings.HasPrefix(pk, runPK(finished.ID)+"|") || strings.HasPrefix(pk, streamPK(world.RunStreamPrefix(finished.ID))):
			counted["finished"]++
			if at == 0 {
				t.Errorf("item %s of the finished run has no expiresAt", pk)
			}
			if expiry != 0 && at != expiry {
				t.Errorf("item %s expires at %d, another at %d: the run's items expire together", pk, at, expiry)
			}
			expiry = at
		case strings.HasPrefix(pk, runPK(running.ID)+"|") || strings.HasPrefix(pk, streamPK(world.RunStreamPrefix(running.ID))):
			counted["running"]++
			if at != 0 {
				t.Errorf("item %s of the running run has expiresAt %d", pk, at)
			}
		}
	}
	if counted["finished"] < 123 || counted["running"] < 3 {
		t.Errorf("found %v items, want the finished run's 121 events, head, run and stream heads, and the running run's", counted)
	}
	want := time.Now().Add(world.DefaultRetention).Unix()
	if expiry < want-60 || expiry > want+60 {
		t.Errorf("the finished run expires at %d, want about %d (30 days from now)", expiry, want)
	}
}

// scanTable reads every item of the test's table, keyed "pk|sk".
func scanTable(t *testing.T, w *World) map[string]ddbItem {
	t.Helper()
	items := map[string]ddbItem{}
	pages := dynamodb.NewScanPaginator(w.ddb, &dynamodb.ScanInput{TableName: &w.opts.Table})
	for pages.HasMorePages() {
		out, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, av := range out.Items {
			var k itemKeys
			if err := unmarshalItem(av, &k); err != nil {
				t.Fatalf("scan: %v", err)
			}
			items[k.PK+"|"+k.SK] = av
		}
	}
	return items
}

// A finished run's S3 objects (payloads too large for their items, its
// compacted streams) are tagged to expire with it, through the bucket's
// lifecycle rule; a reply's objects are tagged when uploaded.
func TestObjectsExpireByLifecycleRule(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	big := bigJSON(1 << 20)
	run := testRun("big-run")
	run.Input = big
	if _, err := w.CreateRun(ctx, run, []world.Event{testEvent(world.RunCreated, string(big))}); err != nil {
		t.Fatal(err)
	}
	stream := world.RunStreamPrefix(run.ID) + "stream/default"
	reply := "replies/" + run.ID
	for _, name := range []string{stream, reply} {
		if err := w.WriteStream(ctx, name, [][]byte{big, []byte("small")}); err != nil {
			t.Fatal(err)
		}
		if err := w.CloseStream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	update := &world.RunUpdate{Status: world.StatusCompleted, Output: big}
	if _, err := w.AppendEvents(ctx, run.ID, 2, []world.Event{testEvent(world.RunCompleted, string(big))}, update); err != nil {
		t.Fatal(err)
	}
	if err := w.ExpireRun(ctx, run.ID, []string{stream, reply}); err != nil {
		t.Fatal(err)
	}
	out, err := w.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &w.opts.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	tagged := map[string]int{}
	for _, o := range out.Contents {
		tags, err := w.s3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &w.opts.Bucket, Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		value := ""
		for _, tag := range tags.TagSet {
			if aws.ToString(tag.Key) == tagExpiry {
				value = aws.ToString(tag.Value)
			}
		}
		want := tagValueRun
		if strings.Contains(*o.Key, "replies/") {
			want = tagValueReply
		}
		if value != want {
			t.Errorf("object %s is tagged %s=%q, want %q", *o.Key, tagExpiry, value, want)
		}
		tagged[value]++
	}
	// The run: input, output, two event payloads, the stream's object; the
	// reply: its compacted object (its chunk's blob was deleted then).
	if tagged[tagValueRun] != 5 || tagged[tagValueReply] != 1 {
		t.Errorf("tagged objects: %v, want 5 of the run's and 1 of the reply's", tagged)
	}
	rules, err := w.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &w.opts.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	days := map[string]int32{}
	for _, r := range rules.Rules {
		if r.Expiration != nil && r.Filter != nil && r.Filter.Tag != nil {
			days[aws.ToString(r.Filter.Tag.Value)] = aws.ToInt32(r.Expiration.Days)
		}
	}
	if days[tagValueRun] != 30 || days[tagValueReply] != 1 {
		t.Errorf("lifecycle expirations by tag: %v, want run after 30 days, reply after 1", days)
	}
}
