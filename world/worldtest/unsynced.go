package worldtest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

var unsyncedTests = []test{
	{"ReadsWhatTheSyncedReadsRead", testUnsyncedReads},
}

// testUnsyncedReads checks a World's optional world.UnsyncedReader against
// its GetRun and ReadStream: the same run, the same chunks, the same
// errors, before and after the run's end and the stream's close.
func testUnsyncedReads(t *testing.T, w world.World) {
	u := optional[world.UnsyncedReader](t, w)
	ctx := testContext(t)
	if _, err := u.GetRunUnsynced(ctx, unique("missing")); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("GetRunUnsynced of a missing run: %v, want ErrRunNotFound", err)
	}
	run := createRun(t, w, newRun(unique("wf")), ev(world.RunCreated, "", ""))
	name := unique("stream")
	same := func(when string) {
		t.Helper()
		synced, err := w.GetRun(ctx, run.ID)
		unsynced, uerr := u.GetRunUnsynced(ctx, run.ID)
		if err != nil || uerr != nil || !reflect.DeepEqual(synced, unsynced) {
			t.Errorf("%s: GetRunUnsynced = %+v, %v; GetRun = %+v, %v", when, unsynced, uerr, synced, err)
		}
		for from := range int64(3) {
			chunks, closed, err := w.ReadStream(ctx, name, from)
			uchunks, uclosed, uerr := u.ReadStreamUnsynced(ctx, name, from)
			if err != nil || uerr != nil || !reflect.DeepEqual(chunks, uchunks) || closed != uclosed {
				t.Errorf("%s: ReadStreamUnsynced(%d) = %q, closed %v, %v; ReadStream = %q, closed %v, %v",
					when, from, uchunks, uclosed, uerr, chunks, closed, err)
			}
		}
	}
	same("a running run, a stream never written")
	mustWrite(t, w, name, "a", "b")
	mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: world.StatusCompleted, Output: []byte(`"done"`)}, ev(world.RunCompleted, "", ""))
	same("an ended run, an open stream")
	if err := w.CloseStream(ctx, name); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	same("a closed stream")
}
