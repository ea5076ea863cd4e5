package worldtest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

var hookTests = []test{
	{"ClaimAndGet", testClaimAndGet},
	{"ReclaimBySameHolder", testReclaimBySameHolder},
	{"ClaimConflict", testClaimConflict},
	{"ForceTakeover", testForceTakeover},
	{"GetMissing", testGetMissingHook},
	{"DisposeByOtherRun", testDisposeByOtherRun},
	{"DisposeRetained", testDisposeRetained},
	{"DisposeWithoutRetention", testDisposeWithoutRetention},
}

func newHook(token, runID, corr string) world.Hook {
	return world.Hook{
		Token:         token,
		RunID:         runID,
		CorrelationID: corr,
		Kind:          "webhook",
		Metadata:      json.RawMessage(`{"path":"/x"}`),
		CreatedAt:     now(),
	}
}

func mustClaim(t *testing.T, w world.World, h world.Hook) {
	t.Helper()
	if _, err := w.ClaimHook(testContext(t), h, false); err != nil {
		t.Fatalf("ClaimHook(%s by %s): %v", h.Token, h.RunID, err)
	}
}

func mustGetHook(t *testing.T, w world.World, token string) world.Hook {
	t.Helper()
	h, err := w.GetHook(testContext(t), token)
	if err != nil {
		t.Fatalf("GetHook(%s): %v", token, err)
	}
	return h
}

// checkHook compares every field of a hook read back from the World.
func checkHook(t *testing.T, what string, got, want world.Hook) {
	t.Helper()
	if got.Token != want.Token || got.RunID != want.RunID || got.CorrelationID != want.CorrelationID ||
		got.Kind != want.Kind || !jsonEqual(got.Metadata, want.Metadata) || !got.CreatedAt.Equal(want.CreatedAt) ||
		got.Disposed != want.Disposed || !got.RetainUntil.Equal(want.RetainUntil) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func testClaimAndGet(t *testing.T, w world.World) {
	h := newHook(unique("tok"), unique("run"), "hook-1")
	prev, err := w.ClaimHook(testContext(t), h, false)
	if err != nil {
		t.Fatalf("ClaimHook of a free token: %v", err)
	}
	if !reflect.ValueOf(prev).IsZero() {
		t.Errorf("ClaimHook of a free token returned previous holder %+v", prev)
	}
	checkHook(t, "GetHook", mustGetHook(t, w, h.Token), h)
}

func testReclaimBySameHolder(t *testing.T, w world.World) {
	h := newHook(unique("tok"), unique("run"), "hook-1")
	mustClaim(t, w, h)
	mustClaim(t, w, h)
	checkHook(t, "GetHook after a re-claim", mustGetHook(t, w, h.Token), h)

	// The same run under another correlation is a different hook.
	other := h
	other.CorrelationID = "hook-2"
	if _, err := w.ClaimHook(testContext(t), other, false); !errors.Is(err, world.ErrHookConflict) {
		t.Fatalf("ClaimHook by the same run under another correlation: err = %v, want ErrHookConflict", err)
	}
}

func testClaimConflict(t *testing.T, w world.World) {
	h := newHook(unique("tok"), unique("run"), "hook-1")
	mustClaim(t, w, h)
	holder, err := w.ClaimHook(testContext(t), newHook(h.Token, unique("run"), "hook-1"), false)
	if !errors.Is(err, world.ErrHookConflict) {
		t.Fatalf("ClaimHook of a held token: err = %v, want ErrHookConflict", err)
	}
	checkHook(t, "the holder ClaimHook returned", holder, h)
	checkHook(t, "GetHook after a conflict", mustGetHook(t, w, h.Token), h)
}

func testForceTakeover(t *testing.T, w world.World) {
	ctx := testContext(t)
	first := newHook(unique("tok"), unique("run"), "hook-1")
	mustClaim(t, w, first)
	second := newHook(first.Token, unique("run"), "hook-9")
	prev, err := w.ClaimHook(ctx, second, true)
	if err != nil {
		t.Fatalf("forced ClaimHook: %v", err)
	}
	checkHook(t, "previous holder of a forced claim", prev, first)
	checkHook(t, "GetHook after a forced claim", mustGetHook(t, w, first.Token), second)

	free := newHook(unique("tok"), unique("run"), "hook-1")
	prev, err = w.ClaimHook(ctx, free, true)
	if err != nil || !reflect.ValueOf(prev).IsZero() {
		t.Fatalf("forced ClaimHook of a free token = %+v, %v; want zero Hook, nil", prev, err)
	}
}

func testGetMissingHook(t *testing.T, w world.World) {
	if _, err := w.GetHook(testContext(t), unique("tok")); !errors.Is(err, world.ErrHookNotFound) {
		t.Fatalf("GetHook of a missing token: err = %v, want ErrHookNotFound", err)
	}
}

func testDisposeByOtherRun(t *testing.T, w world.World) {
	h := newHook(unique("tok"), unique("run"), "hook-1")
	mustClaim(t, w, h)
	err := w.DisposeHook(testContext(t), h.Token, unique("run"), time.Time{})
	if !errors.Is(err, world.ErrHookNotOwner) {
		t.Fatalf("DisposeHook by another run: err = %v, want ErrHookNotOwner", err)
	}
	checkHook(t, "GetHook after a refused dispose", mustGetHook(t, w, h.Token), h)
}

func testDisposeRetained(t *testing.T, w world.World) {
	ctx := testContext(t)
	h := newHook(unique("tok"), unique("run"), "hook-1")
	claimed := time.Now()
	mustClaim(t, w, h)
	// The retained checks below make four calls that must all land before
	// the retention ends: scale it by what one call takes now, so a loaded
	// machine lengthens the window instead of failing the test.
	retain := now().Add(max(300*time.Millisecond, 20*time.Since(claimed)))
	if err := w.DisposeHook(ctx, h.Token, h.RunID, retain); err != nil {
		t.Fatalf("DisposeHook: %v", err)
	}
	disposed := h
	disposed.Disposed, disposed.RetainUntil = true, retain
	checkHook(t, "GetHook of a retained hook", mustGetHook(t, w, h.Token), disposed)

	// While retained the token is blocked, for its own run too: a disposed
	// hook is never resumed.
	for _, claim := range []world.Hook{newHook(h.Token, unique("run"), "hook-1"), h} {
		holder, err := w.ClaimHook(ctx, claim, false)
		if !errors.Is(err, world.ErrHookConflict) {
			t.Fatalf("ClaimHook of a retained token by run %s: err = %v, want ErrHookConflict", claim.RunID, err)
		}
		checkHook(t, "the holder of a retained token", holder, disposed)
	}

	time.Sleep(time.Until(retain) + 20*time.Millisecond)
	next := newHook(h.Token, unique("run"), "hook-1")
	if _, err := w.ClaimHook(ctx, next, false); err != nil {
		t.Fatalf("ClaimHook once the retention has passed: %v", err)
	}
	checkHook(t, "GetHook after the retention", mustGetHook(t, w, h.Token), next)
}

func testDisposeWithoutRetention(t *testing.T, w world.World) {
	ctx := testContext(t)
	h := newHook(unique("tok"), unique("run"), "hook-1")
	mustClaim(t, w, h)
	if err := w.DisposeHook(ctx, h.Token, h.RunID, time.Time{}); err != nil {
		t.Fatalf("DisposeHook: %v", err)
	}
	if _, err := w.GetHook(ctx, h.Token); !errors.Is(err, world.ErrHookNotFound) {
		t.Fatalf("GetHook of a disposed, unretained hook: err = %v, want ErrHookNotFound", err)
	}
	// Disposing again is harmless: the runtime may replay a dispose.
	if err := w.DisposeHook(ctx, h.Token, h.RunID, time.Time{}); err != nil {
		t.Fatalf("second DisposeHook: %v", err)
	}
	next := newHook(h.Token, unique("run"), "hook-1")
	prev, err := w.ClaimHook(ctx, next, false)
	if err != nil || !reflect.ValueOf(prev).IsZero() {
		t.Fatalf("ClaimHook of a freed token = %+v, %v; want zero Hook, nil", prev, err)
	}
}
