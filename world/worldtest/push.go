package worldtest

import (
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

// RunPush runs the rules of a World that pushes stream writes to readers
// (a world.StreamSubscriber): newPair returns two Worlds on one store, a
// writer and a reader, as two processes would have them. A push is a hint:
// these rules check that it comes and that the stream, read after it,
// holds what it announced.
func RunPush(t *testing.T, newPair func(t *testing.T) (writer, reader world.World)) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, writer, reader world.World)
	}{
		{"WriteWakesAReaderOfAnotherWorld", testPushWrite},
		{"CloseWakesAReader", testPushClose},
		{"EveryReaderIsWoken", testPushEveryReader},
		{"CloseTwice", testPushCloseTwice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writer, reader := newPair(t)
			tc.run(t, writer, reader)
		})
	}
}

func subscribe(t *testing.T, w world.World, name string) world.StreamSubscription {
	t.Helper()
	s, ok := w.(world.StreamSubscriber)
	if !ok {
		t.Fatalf("%T is not a world.StreamSubscriber", w)
	}
	sub := s.SubscribeStream(testContext(t), name)
	t.Cleanup(sub.Close)
	return sub
}

// awaitMoved fails the test unless sub says the stream moved past from
// within the subtest's context.
func awaitMoved(t *testing.T, sub world.StreamSubscription, from int64) {
	t.Helper()
	ctx := testContext(t)
	select {
	case <-sub.Moved(from):
	case <-ctx.Done():
		t.Fatalf("no push past %d: %v", from, ctx.Err())
	}
}

func testPushWrite(t *testing.T, writer, reader world.World) {
	name := world.RunStreamPrefix(unique("wrun_push")) + "s"
	sub := subscribe(t, reader, name)
	checkRead(t, reader, name, 0, nil, false)
	mustWrite(t, writer, name, "a", "b")
	awaitMoved(t, sub, 0)
	checkRead(t, reader, name, 0, []string{"a", "b"}, false)
	mustWrite(t, writer, name, "c")
	awaitMoved(t, sub, 2)
	checkRead(t, reader, name, 2, []string{"c"}, false)
}

func testPushClose(t *testing.T, writer, reader world.World) {
	name := world.RunStreamPrefix(unique("wrun_push")) + "s"
	mustWrite(t, writer, name, "a")
	sub := subscribe(t, reader, name)
	if err := writer.CloseStream(testContext(t), name); err != nil {
		t.Fatal(err)
	}
	awaitMoved(t, sub, 1)
	checkRead(t, reader, name, 1, nil, true)
}

func testPushEveryReader(t *testing.T, writer, reader world.World) {
	name := world.RunStreamPrefix(unique("wrun_push")) + "s"
	subs := []world.StreamSubscription{subscribe(t, reader, name), subscribe(t, reader, name), subscribe(t, writer, name)}
	mustWrite(t, writer, name, "a")
	for _, sub := range subs {
		awaitMoved(t, sub, 0)
	}
}

func testPushCloseTwice(t *testing.T, writer, reader world.World) {
	name := world.RunStreamPrefix(unique("wrun_push")) + "s"
	first, second := subscribe(t, reader, name), subscribe(t, reader, name)
	first.Close()
	first.Close()
	mustWrite(t, writer, name, "a")
	awaitMoved(t, second, 0)
}
