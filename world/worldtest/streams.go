package worldtest

import (
	"errors"
	"slices"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

var streamTests = []test{
	{"WriteAndRead", testWriteAndRead},
	{"ReadMissing", testReadMissingStream},
	{"Close", testCloseStream},
	{"CloseUnwritten", testCloseUnwrittenStream},
}

func mustWrite(t *testing.T, w world.World, name string, chunks ...string) {
	t.Helper()
	var bs [][]byte
	for _, c := range chunks {
		bs = append(bs, []byte(c))
	}
	if err := w.WriteStream(testContext(t), name, bs); err != nil {
		t.Fatalf("WriteStream(%s): %v", name, err)
	}
}

// read returns the chunks of a stream from index from, as strings.
func read(t *testing.T, w world.World, name string, from int64) ([]string, bool) {
	t.Helper()
	chunks, closed, err := w.ReadStream(testContext(t), name, from)
	if err != nil {
		t.Fatalf("ReadStream(%s, %d): %v", name, from, err)
	}
	var s []string
	for _, c := range chunks {
		s = append(s, string(c))
	}
	return s, closed
}

func checkRead(t *testing.T, w world.World, name string, from int64, want []string, wantClosed bool) {
	t.Helper()
	got, closed := read(t, w, name, from)
	if !slices.Equal(got, want) || closed != wantClosed {
		t.Errorf("ReadStream(%s, %d) = %q, closed %v; want %q, closed %v", name, from, got, closed, want, wantClosed)
	}
}

func testWriteAndRead(t *testing.T, w world.World) {
	name := unique("stream")
	mustWrite(t, w, name, "a", "b")
	// The World keeps its own copy of a chunk.
	buf := []byte("c")
	if err := w.WriteStream(testContext(t), name, [][]byte{buf}); err != nil {
		t.Fatalf("WriteStream: %v", err)
	}
	buf[0] = 'X'
	all := []string{"a", "b", "c"}
	for from := range int64(5) {
		checkRead(t, w, name, from, all[min(from, 3):], false)
	}
}

func testReadMissingStream(t *testing.T, w world.World) {
	checkRead(t, w, unique("stream"), 0, nil, false)
}

func testCloseStream(t *testing.T, w world.World) {
	ctx := testContext(t)
	name := unique("stream")
	mustWrite(t, w, name, "a")
	if err := w.CloseStream(ctx, name); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	checkRead(t, w, name, 0, []string{"a"}, true)
	checkRead(t, w, name, 1, nil, true)
	if err := w.WriteStream(ctx, name, [][]byte{[]byte("late")}); !errors.Is(err, world.ErrStreamClosed) {
		t.Fatalf("WriteStream after CloseStream: err = %v, want ErrStreamClosed", err)
	}
	if err := w.CloseStream(ctx, name); err != nil {
		t.Fatalf("second CloseStream: %v", err)
	}
	checkRead(t, w, name, 0, []string{"a"}, true)
}

func testCloseUnwrittenStream(t *testing.T, w world.World) {
	name := unique("stream")
	if err := w.CloseStream(testContext(t), name); err != nil {
		t.Fatalf("CloseStream of an unwritten stream: %v", err)
	}
	checkRead(t, w, name, 0, nil, true)
}
