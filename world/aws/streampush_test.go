package aws

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// pushWait bounds the wait for a push in these tests: far beyond any push
// on a loaded machine; the tests assert on what was read, not on time.
const pushWait = 30 * time.Second

// newPushWorlds bootstraps resources with an Event API and returns two
// Worlds on them, as two processes would have: a writer and a reader.
func newPushWorlds(t *testing.T) (writer, reader *World) {
	t.Helper()
	writer = newTestWorldNamed(t, emulatorConfig(t), func(n *Names) { n.EventAPI = n.Table })
	return writer, otherWorld(t, writer.Options())
}

func otherWorld(t *testing.T, opts Options) *World {
	t.Helper()
	w, err := New(emulatorConfig(t), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func uniqueStream() string {
	return world.RunStreamPrefix("wrun_push_"+strings.ToLower(rand.Text())) + "s"
}

// awaitMoved waits for sub to say the stream moved past from.
func awaitMoved(t *testing.T, sub world.StreamSubscription, from int64) {
	t.Helper()
	select {
	case <-sub.Moved(from):
	case <-time.After(pushWait):
		t.Fatalf("no push past %d within %v", from, pushWait)
	}
}

// A reader subscribed on one World learns of a chunk another World wrote
// from the push, and reads it with one Query: no poll in between.
func TestPushWakesAReaderOfAnotherWorld(t *testing.T) {
	writer, reader := newPushWorlds(t)
	ctx := t.Context()
	name := uniqueStream()
	sub := reader.SubscribeStream(ctx, name)
	defer sub.Close()
	reader.ResetCalls()
	checkStream(t, reader, name, 0, nil, false)
	writer.ResetCalls()
	if err := writer.WriteStream(ctx, name, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	awaitMoved(t, sub, 0)
	checkStream(t, reader, name, 0, [][]byte{[]byte("a")}, false)
	if got := reader.Calls()["DynamoDB.Query"]; got != 2 {
		t.Errorf("the reader made %d Queries, want 2: one before the write, one after its push (%v)", got, reader.Calls())
	}
	if got := writer.Calls(); got[callPublish] != 1 || got[callPublishFailed] != 0 {
		t.Errorf("the write made %v, want one publish that succeeded", got)
	}
}

// Readers of one stream on one World share one subscription.
func TestReadersShareASubscription(t *testing.T) {
	_, reader := newPushWorlds(t)
	ctx := t.Context()
	name := uniqueStream()
	for range 3 {
		defer reader.SubscribeStream(ctx, name).Close()
	}
	if got := reader.Calls(); got[callSubscribe] != 1 || got[callConnect] != 1 {
		t.Errorf("three readers of one stream on one World made %v, want 1 connection and 1 subscription", got)
	}
}

// A publish that fails (the Event API is gone) fails no write and loses
// no chunk: the reader polls them, and the failure is counted.
func TestFailedPublishLosesNothing(t *testing.T) {
	writer, reader := newPushWorlds(t)
	ctx := t.Context()
	if err := deleteEventAPI(ctx, emulatorConfig(t), writer.Options().StreamEvents); err != nil {
		t.Fatal(err)
	}
	name := uniqueStream()
	writer.ResetCalls()
	for _, c := range []string{"a", "b"} {
		if err := writer.WriteStream(ctx, name, [][]byte{[]byte(c)}); err != nil {
			t.Fatalf("a write whose publish fails: %v", err)
		}
	}
	if got := writer.Calls(); got[callPublishFailed] != 2 || got["DynamoDB.TransactWriteItems"] != 2 {
		t.Errorf("two writes without an Event API made %v, want 2 TransactWriteItems and 2 failed publishes", got)
	}
	sub := reader.SubscribeStream(ctx, name) // fails, and returns for the reader to poll
	defer sub.Close()
	checkStream(t, reader, name, 0, [][]byte{[]byte("a"), []byte("b")}, false)
}

// A World without an Event API publishes nothing and subscribes to
// nothing: a stream write is one TransactWriteItems, as it always was.
func TestNoEventAPINoPush(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	name := uniqueStream()
	sub := w.SubscribeStream(ctx, name)
	defer sub.Close()
	w.ResetCalls()
	if err := w.WriteStream(ctx, name, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	if got := w.Calls(); len(got) != 1 || got["DynamoDB.TransactWriteItems"] != 1 {
		t.Errorf("a write without an Event API made %v, want 1 TransactWriteItems", got)
	}
	select {
	case <-sub.Moved(0):
		t.Error("a subscription without an Event API fired")
	default:
	}
}

// A reply stream's writes announce nothing: its reader polls its cursor
// and never subscribes, so a publish would only cost the write its time
// and an operation.
func TestReplyStreamsPublishNothing(t *testing.T) {
	writer, _ := newPushWorlds(t)
	ctx := t.Context()
	name := "replies/" + strings.ToLower(rand.Text())
	writer.ResetCalls()
	if err := writer.WriteStream(ctx, name, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	if err := writer.CloseStream(ctx, name); err != nil {
		t.Fatal(err)
	}
	if got := writer.Calls(); got[callPublish] != 0 || got[callPublishFailed] != 0 {
		t.Errorf("a reply stream's write and close published: %v", got)
	}
}

// A dropped connection is made again, and the subscription made again on
// it wakes the reader (a write may have gone unannounced meanwhile);
// later writes are pushed again.
func TestDroppedConnectionReconnects(t *testing.T) {
	writer, reader := newPushWorlds(t)
	ctx := t.Context()
	name := uniqueStream()
	sub := reader.SubscribeStream(ctx, name)
	defer sub.Close()
	reader.events.subs.dropConnection()
	awaitMoved(t, sub, 0) // the lapse
	if got := reader.Calls(); got[callConnect] != 2 || got[callSubscribe] != 2 {
		t.Errorf("after a dropped connection the reader made %v, want 2 connections and 2 subscriptions", got)
	}
	if err := writer.WriteStream(ctx, name, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	awaitMoved(t, sub, 0)
	checkStream(t, reader, name, 0, [][]byte{[]byte("a")}, false)
}

// The connection closes once no reader is left, and a later reader opens
// one again.
func TestUnusedConnectionCloses(t *testing.T) {
	_, reader := newPushWorlds(t)
	ctx := t.Context()
	s := reader.events.subs
	s.unusedFor = 0
	reader.SubscribeStream(ctx, uniqueStream()).Close()
	waitStopped(t, s)
	sub := reader.SubscribeStream(ctx, uniqueStream())
	defer sub.Close()
	if got := reader.Calls()[callConnect]; got != 2 {
		t.Errorf("a reader after the connection closed made %d connections in all, want 2", got)
	}
}

func waitStopped(t *testing.T, s *subscriptions) {
	t.Helper()
	deadline := time.Now().Add(pushWait)
	for {
		s.mu.Lock()
		running := s.running
		s.mu.Unlock()
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection without readers still open after %v", pushWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dropConnection cuts the open connection as a network failure would.
func (s *subscriptions) dropConnection() {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		_ = conn.CloseNow()
	}
}

// Run.Readable on the AWS World subscribes before its first read, is
// woken by the push of a chunk another World wrote, polls at its fallback
// pace meanwhile, and leaves the subscription when the loop ends.
func TestReadableIsPushed(t *testing.T) {
	writer, reader := newPushWorlds(t)
	ctx := t.Context()
	run, err := workflow.Start(ctx, workflow.NewClient(writer), awsWaiter, "aws-push:"+rand.Text())
	if err != nil {
		t.Fatal(err)
	}
	client := workflow.NewClient(reader)
	r, err := workflow.GetRun[string](ctx, client, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	reader.ResetCalls()
	chunks := make(chan workflow.StreamChunk)
	readCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer close(chunks)
		for chunk, err := range r.Readable(readCtx, "", 0) {
			if err != nil {
				return
			}
			chunks <- chunk
		}
	}()
	time.Sleep(1500 * time.Millisecond) // past the pace's first second of short pauses
	if got := reader.Calls()[callSubscribe]; got != 1 {
		t.Errorf("the reader made %d subscriptions, want 1", got)
	}
	reader.ResetCalls()
	idle := 2 * time.Second
	time.Sleep(idle)
	// Rounds of two Queries (the stream, the run) at 4 requests a second,
	// and one round the sleeps' edges may add.
	if got, most := reader.Calls()["DynamoDB.Query"], int64(4*idle/time.Second)+2; got > most {
		t.Errorf("an idle reader made %d Queries in %v, want at most %d (%v)", got, idle, most, reader.Calls())
	}
	if err := writer.WriteStream(ctx, engine.RunStream(run.ID, ""), [][]byte{[]byte(`"a"`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case chunk := <-chunks:
		if string(chunk.Data) != `"a"` {
			t.Errorf("read %s, want \"a\"", chunk.Data)
		}
	case <-time.After(pushWait):
		t.Fatal("the chunk never came")
	}
	stop()
	for range chunks {
	}
	reader.events.subs.mu.Lock()
	defer reader.events.subs.mu.Unlock()
	if n := len(reader.events.subs.channels); n != 0 {
		t.Errorf("%d channels still subscribed after the reader stopped", n)
	}
}

// A World from the environment finds the Event API by its ID, under the
// default DNS names (an emulator is reached at its endpoint, with them as
// Host), and its writes are pushed to a reader.
func TestStreamEventsFromEnv(t *testing.T) {
	writer, _ := newPushWorlds(t)
	api := writer.Options().StreamEvents
	t.Setenv("WORKFLOW_STREAM_EVENTS_API_ID", "")
	opts := writer.Options()
	for k, v := range map[string]string{
		"WORKFLOW_TABLE": opts.Table, "WORKFLOW_QUEUE_URL": opts.QueueURL, "WORKFLOW_BUCKET": opts.Bucket,
		"AWS_REGION": "us-east-1", "WORKFLOW_STREAM_EVENTS_NAMESPACE": api.Namespace,
	} {
		t.Setenv(k, v)
	}
	if got, err := OptionsFromEnv(); err != nil || got.StreamEvents != (EventAPI{}) {
		t.Fatalf("OptionsFromEnv without an API ID: %+v, %v; want no stream events", got.StreamEvents, err)
	}
	t.Setenv("WORKFLOW_STREAM_EVENTS_API_ID", api.id())
	fromEnv, err := OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if want := EventAPIByID(api.id(), "us-east-1", api.Namespace); fromEnv.StreamEvents != want {
		t.Fatalf("OptionsFromEnv: %+v, want %+v", fromEnv.StreamEvents, want)
	}
	reader := otherWorld(t, fromEnv)
	name := uniqueStream()
	sub := reader.SubscribeStream(t.Context(), name)
	defer sub.Close()
	if err := writer.WriteStream(t.Context(), name, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	awaitMoved(t, sub, 0)
}
