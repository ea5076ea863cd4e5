package worldtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var queueTests = []test{
	{"EnqueueReceiveAck", testEnqueueReceiveAck},
	{"DeliverAtDelays", testDeliverAtDelays},
	{"VisibilityTimeoutRedelivers", testVisibilityTimeoutRedelivers},
	{"DedupKey", testDedupKey},
	{"ReceiveWakesOnEnqueue", testReceiveWakesOnEnqueue},
	{"ReceiveHonoursContext", testReceiveHonoursContext},
	{"ReleaseRedeliversAtOnce", testReleaseRedeliversAtOnce},
	{"CancelledReceiveTakesNothing", testCancelledReceiveTakesNothing},
}

// inbox sends and receives one subtest's messages: their run IDs share a
// unique prefix. Deliveries of other messages, which a shared World may hold,
// are skipped and not acknowledged, so they reappear for their owner.
type inbox struct {
	w      world.World
	prefix string
}

func newInbox(w world.World) inbox { return inbox{w: w, prefix: unique("q") + "/"} }

// msg is a message for the inbox's run named name.
func (b inbox) msg(name string) world.Message { return world.Message{RunID: b.prefix + name} }

func (b inbox) enqueue(t *testing.T, msg world.Message) {
	t.Helper()
	if err := b.w.Enqueue(testContext(t), msg); err != nil {
		t.Fatalf("Enqueue(%+v): %v", msg, err)
	}
}

// receive returns the next delivery of one of the inbox's messages, or
// ctx's error once it is done, even if the World keeps delivering.
func (b inbox) receive(ctx context.Context, visibility time.Duration) (world.Delivery, error) {
	for {
		d, err := b.w.Receive(ctx, visibility)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil || strings.HasPrefix(d.RunID, b.prefix) {
			return d, err
		}
	}
}

// mustReceive receives one of the inbox's messages within a few seconds.
func (b inbox) mustReceive(t *testing.T, visibility time.Duration) world.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), 3*time.Second)
	defer cancel()
	d, err := b.receive(ctx, visibility)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if d.Receipt == "" {
		t.Errorf("delivery %+v has no receipt", d)
	}
	return d
}

// expectNone checks that none of the inbox's messages is delivered within
// wait. The subtests give it a window that ends well before the message
// they hold back is due, so that a slow machine does not fail them.
func (b inbox) expectNone(t *testing.T, wait time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), wait)
	defer cancel()
	if d, err := b.receive(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Receive = %+v, %v; want nothing within %v", d, err, wait)
	}
}

func (b inbox) ack(t *testing.T, d world.Delivery) {
	t.Helper()
	if err := b.w.Ack(testContext(t), d); err != nil {
		t.Fatalf("Ack(%+v): %v", d, err)
	}
}

// checkDelivery compares a delivery with the message sent and its attempt.
func checkDelivery(t *testing.T, d world.Delivery, want world.Message, attempt int) {
	t.Helper()
	if d.RunID != want.RunID || d.DedupKey != want.DedupKey || !d.DeliverAt.Equal(want.DeliverAt) || d.Attempt != attempt {
		t.Errorf("delivery = %+v, want %+v at attempt %d", d, want, attempt)
	}
}

func testEnqueueReceiveAck(t *testing.T, w world.World) {
	b := newInbox(w)
	msg := b.msg("1")
	msg.DeliverAt = now().Add(-time.Hour) // a past DeliverAt is due now
	b.enqueue(t, msg)
	// A short visibility: if Ack did not delete the message it would be back
	// well within expectNone's wait.
	d := b.mustReceive(t, 100*time.Millisecond)
	checkDelivery(t, d, msg, 1)
	b.ack(t, d)
	b.expectNone(t, 300*time.Millisecond)
}

func testDeliverAtDelays(t *testing.T, w world.World) {
	b := newInbox(w)
	msg := b.msg("1")
	msg.DeliverAt = now().Add(300 * time.Millisecond)
	sent := time.Now()
	b.enqueue(t, msg)
	// A loaded machine slows each of the World's calls alike: the delivery
	// may come late by its granularity (SQS delays whole seconds) and by
	// what a call of the World takes now, which the Enqueue shows.
	allowed := time.Second + 2*time.Since(sent)
	b.expectNone(t, time.Until(msg.DeliverAt)-100*time.Millisecond)
	d := b.mustReceive(t, time.Minute)
	got := time.Now()
	if got.Before(msg.DeliverAt) {
		t.Errorf("delivered at %v, before DeliverAt %v", got, msg.DeliverAt)
	}
	if late := got.Sub(msg.DeliverAt); late > allowed {
		t.Errorf("delivered %v after DeliverAt, more than the %v allowed; a waiting Receive should take it when due", late, allowed)
	}
	checkDelivery(t, d, msg, 1)
	b.ack(t, d)
}

func testVisibilityTimeoutRedelivers(t *testing.T, w world.World) {
	b := newInbox(w)
	msg := b.msg("1")
	b.enqueue(t, msg)
	const visibility = 250 * time.Millisecond
	received := time.Now() // no later than the World's time of the first delivery
	first := b.mustReceive(t, visibility)
	checkDelivery(t, first, msg, 1)
	b.expectNone(t, time.Until(received.Add(visibility))-100*time.Millisecond)

	second := b.mustReceive(t, time.Minute)
	if d := time.Since(received); d < visibility {
		t.Errorf("redelivered %v after the first delivery, before its visibility timeout %v", d, visibility)
	}
	checkDelivery(t, second, msg, 2)
	b.ack(t, second)
	b.expectNone(t, 100*time.Millisecond)
}

func testDedupKey(t *testing.T, w world.World) {
	b := newInbox(w)
	key := unique("key")
	first, dup, later := b.msg("first"), b.msg("dup"), b.msg("later")
	first.DedupKey, dup.DedupKey, later.DedupKey = key, key, key
	b.enqueue(t, first)
	b.enqueue(t, dup) // dropped: first is still waiting
	d1 := b.mustReceive(t, time.Minute)
	checkDelivery(t, d1, first, 1)
	b.expectNone(t, 150*time.Millisecond)

	b.enqueue(t, later) // kept: first has been delivered
	d2 := b.mustReceive(t, time.Minute)
	checkDelivery(t, d2, later, 1)
	b.ack(t, d1)
	b.ack(t, d2)

	// Messages without a key, or with different keys, are all kept.
	sent := map[string]bool{}
	for i, k := range []string{"", "", unique("key"), unique("key")} {
		m := b.msg(string(rune('a' + i)))
		m.DedupKey = k
		b.enqueue(t, m)
		sent[m.RunID] = true
	}
	for range sent {
		d := b.mustReceive(t, time.Minute)
		if !sent[d.RunID] {
			t.Fatalf("unexpected or repeated delivery %+v", d)
		}
		delete(sent, d.RunID)
		b.ack(t, d)
	}
}

func testReceiveWakesOnEnqueue(t *testing.T, w world.World) {
	b := newInbox(w)
	msg := b.msg("1")
	sent := make(chan time.Time, 1)
	afterDelay(t, func() {
		sent <- time.Now()
		if err := w.Enqueue(testContext(t), msg); err != nil {
			t.Errorf("Enqueue: %v", err)
		}
	})
	d := b.mustReceive(t, time.Minute)
	// Seconds, not the poll's fallback interval: a Receive that slept
	// instead of waking would be much later; a loaded machine can take
	// a second or two to schedule the wake-up.
	if late := time.Since(<-sent); late > 5*time.Second {
		t.Errorf("a waiting Receive took %v to see a new message", late)
	}
	checkDelivery(t, d, msg, 1)
	b.ack(t, d)
}

func testReceiveHonoursContext(t *testing.T, w world.World) {
	b := newInbox(w)
	ctx, cancel := context.WithCancel(testContext(t))
	time.AfterFunc(50*time.Millisecond, cancel)
	// On another goroutine, so that a Receive that never returns fails the
	// test instead of hanging it.
	errc := make(chan error, 1)
	go func() {
		_, err := b.receive(ctx, time.Minute)
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Receive on an empty queue: err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Receive still waiting a second after its context was cancelled")
	}
}

// testCancelledReceiveTakesNothing stops a Receive mid-wait, as a worker
// that shuts down does, then enqueues: the next Receive gets the message at
// once. A World whose abandoned wait still takes messages (an SQS long poll
// cut by its client) would hide it for the whole visibility timeout.
func testCancelledReceiveTakesNothing(t *testing.T, w world.World) {
	b := newInbox(w)
	ctx, cancel := context.WithCancel(testContext(t))
	errc := make(chan error, 1)
	go func() {
		_, err := b.receive(ctx, time.Minute)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the Receive start waiting
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Receive: err = %v, want context.Canceled", err)
	}
	msg := b.msg("1")
	b.enqueue(t, msg)
	// mustReceive waits a few seconds, far less than the minute an
	// abandoned wait would hide the message for. The attempt is not
	// checked: a World may count a take it released at once.
	d := b.mustReceive(t, time.Minute)
	if d.RunID != msg.RunID {
		t.Errorf("delivery = %+v, want %+v", d, msg)
	}
	b.ack(t, d)
}

// testReleaseRedeliversAtOnce releases a delivery hidden for a minute: the
// next Receive gets it again at once, and releasing a stale delivery, one
// superseded by a later delivery of the same message, does not release
// the later one.
func testReleaseRedeliversAtOnce(t *testing.T, w world.World) {
	b := newInbox(w)
	msg := b.msg("1")
	b.enqueue(t, msg)
	first := b.mustReceive(t, time.Minute)
	if err := w.Release(testContext(t), first); err != nil {
		t.Fatalf("Release(%+v): %v", first, err)
	}
	second := b.mustReceive(t, time.Minute)
	checkDelivery(t, second, msg, 2)
	if err := w.Release(testContext(t), first); err != nil {
		t.Fatalf("Release of a stale delivery: %v", err)
	}
	b.expectNone(t, 300*time.Millisecond)
	b.ack(t, second)
	if err := w.Release(testContext(t), second); err != nil {
		t.Errorf("Release after Ack: %v, want nil (a release that finds nothing is harmless)", err)
	}
}
