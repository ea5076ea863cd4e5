package worldtest

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

var runTests = []test{
	{"CreateAndGet", testCreateAndGet},
	{"CreateWithoutEvents", testCreateWithoutEvents},
	{"CreateExisting", testCreateExisting},
	{"GetMissing", testGetMissing},
	{"ListNewestFirst", testListNewestFirst},
	{"ListFilters", testListFilters},
	{"ListPages", testListPages},
	{"ListSeesUpdates", testListSeesUpdates},
}

func testCreateAndGet(t *testing.T, w world.World) {
	ctx := testContext(t)
	run := newRun(unique("wf"))
	run.Attributes = map[string]string{"team": "a"}
	first := []world.Event{ev(world.RunCreated, "", `{"input":1}`), ev(world.RunStarted, "", "")}
	created := createRun(t, w, run, first...)
	checkRun(t, "CreateRun", created, run)

	got, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	checkRun(t, "GetRun", got, run)
	checkEvents(t, mustEvents(t, w, run.ID, 0), run.ID, 1, first)

	// The World hands out copies: changing one must not change the run.
	got.Attributes["team"] = "changed"
	again, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if again.Attributes["team"] != "a" {
		t.Errorf("changing a returned run's attributes changed the stored run: %v", again.Attributes)
	}
}

func testCreateWithoutEvents(t *testing.T, w world.World) {
	run := createRun(t, w, newRun(unique("wf")))
	if evs := mustEvents(t, w, run.ID, 0); len(evs) != 0 {
		t.Fatalf("new run without first events has events %+v", evs)
	}
	e := ev(world.RunStarted, "", "")
	mustAppend(t, w, run.ID, 1, nil, e)
	checkEvents(t, mustEvents(t, w, run.ID, 0), run.ID, 1, []world.Event{e})
}

func testCreateExisting(t *testing.T, w world.World) {
	ctx := testContext(t)
	run := newRun(unique("wf"))
	first := []world.Event{ev(world.RunCreated, "", `{"first":true}`)}
	createRun(t, w, run, first...)

	dup := run
	dup.Workflow = unique("other")
	dup.Status = world.StatusRunning
	got, err := w.CreateRun(ctx, dup, []world.Event{ev(world.RunCreated, "", `{"first":false}`), ev(world.RunStarted, "", "")})
	if !errors.Is(err, world.ErrRunExists) {
		t.Fatalf("CreateRun of an existing ID: err = %v, want ErrRunExists", err)
	}
	checkRun(t, "CreateRun of an existing ID", got, run)
	stored, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	checkRun(t, "GetRun after a duplicate CreateRun", stored, run)
	checkEvents(t, mustEvents(t, w, run.ID, 0), run.ID, 1, first)
}

func testGetMissing(t *testing.T, w world.World) {
	if _, err := w.GetRun(testContext(t), unique("missing")); !errors.Is(err, world.ErrRunNotFound) {
		t.Fatalf("GetRun of a missing run: err = %v, want ErrRunNotFound", err)
	}
}

func testListNewestFirst(t *testing.T, w world.World) {
	wf := unique("wf")
	var ids []string
	for range 3 {
		ids = append(ids, createRun(t, w, newRun(wf)).ID)
	}
	slices.Reverse(ids)
	page := listRuns(t, w, world.RunFilter{Workflow: wf})
	if got := runIDs(page.Runs); !slices.Equal(got, ids) {
		t.Fatalf("ListRuns = %v, want newest first %v", got, ids)
	}
	if page.NextCursor != "" {
		t.Errorf("a complete listing has NextCursor %q", page.NextCursor)
	}
	checkRun(t, "ListRuns", page.Runs[0], mustGetRun(t, w, ids[0]))
}

func testListFilters(t *testing.T, w world.World) {
	wf, other := unique("wf"), unique("wf")
	tag := unique("tag")
	mk := func(workflow string, status world.RunStatus, attrs map[string]string) string {
		r := newRun(workflow)
		r.Status, r.Attributes = status, attrs
		return createRun(t, w, r).ID
	}
	a := mk(wf, world.StatusPending, map[string]string{"tag": tag, "team": "x"})
	b := mk(wf, world.StatusRunning, map[string]string{"tag": tag, "team": "y"})
	c := mk(wf, world.StatusRunning, nil)
	d := mk(other, world.StatusRunning, map[string]string{"tag": tag, "team": "x"})

	for _, tc := range []struct {
		name   string
		filter world.RunFilter
		want   []string
	}{
		{"workflow", world.RunFilter{Workflow: wf}, []string{c, b, a}},
		{"workflow and status", world.RunFilter{Workflow: wf, Status: world.StatusRunning}, []string{c, b}},
		{"attribute", world.RunFilter{Attributes: map[string]string{"tag": tag}}, []string{d, b, a}},
		{"every attribute", world.RunFilter{Attributes: map[string]string{"tag": tag, "team": "x"}}, []string{d, a}},
		{"attribute and workflow", world.RunFilter{Workflow: wf, Attributes: map[string]string{"tag": tag, "team": "x"}}, []string{a}},
		{"status and attribute", world.RunFilter{Status: world.StatusRunning, Attributes: map[string]string{"tag": tag}}, []string{d, b}},
		{"no match", world.RunFilter{Workflow: wf, Status: world.StatusCompleted}, nil},
	} {
		if got := runIDs(listRuns(t, w, tc.filter).Runs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ListRuns = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func testListPages(t *testing.T, w world.World) {
	wf := unique("wf")
	var want []string
	for i := range 7 {
		r := newRun(wf)
		if i%3 == 2 { // interleave runs the filter skips
			r.Status = world.StatusRunning
		} else {
			want = append(want, r.ID)
		}
		createRun(t, w, r)
	}
	slices.Reverse(want)

	var got []string
	filter := world.RunFilter{Workflow: wf, Status: world.StatusPending, Limit: 2}
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatalf("listing did not end after %d pages; got %v", pages, got)
		}
		page := listRuns(t, w, filter)
		if len(page.Runs) > filter.Limit {
			t.Fatalf("page has %d runs, limit is %d", len(page.Runs), filter.Limit)
		}
		got = append(got, runIDs(page.Runs)...)
		if page.NextCursor == "" {
			break
		}
		filter.Cursor = page.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged listing = %v, want %v", got, want)
	}
}

func testListSeesUpdates(t *testing.T, w world.World) {
	wf := unique("wf")
	run := createRun(t, w, newRun(wf), ev(world.RunCreated, "", ""))
	mustAppend(t, w, run.ID, 2, &world.RunUpdate{Status: world.StatusRunning, Attributes: map[string]string{"k": "v"}},
		ev(world.RunStarted, "", ""))
	filter := world.RunFilter{Workflow: wf, Status: world.StatusRunning, Attributes: map[string]string{"k": "v"}}
	if got := runIDs(listRuns(t, w, filter).Runs); !slices.Equal(got, []string{run.ID}) {
		t.Fatalf("ListRuns after an update = %v, want [%s]", got, run.ID)
	}
	if got := listRuns(t, w, world.RunFilter{Workflow: wf, Status: world.StatusPending}).Runs; len(got) != 0 {
		t.Fatalf("ListRuns by the old status = %v, want none", runIDs(got))
	}
}

func listRuns(t *testing.T, w world.World, f world.RunFilter) world.RunPage {
	t.Helper()
	page, err := w.ListRuns(testContext(t), f)
	if err != nil {
		t.Fatalf("ListRuns(%+v): %v", f, err)
	}
	return page
}

func mustGetRun(t *testing.T, w world.World, id string) world.Run {
	t.Helper()
	r, err := w.GetRun(testContext(t), id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return r
}

func runIDs(runs []world.Run) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// checkRun compares every field of a run read back from the World.
func checkRun(t *testing.T, what string, got, want world.Run) {
	t.Helper()
	if got.ID != want.ID || got.Workflow != want.Workflow || got.Status != want.Status ||
		!jsonEqual(got.Input, want.Input) || !jsonEqual(got.Output, want.Output) || !jsonEqual(got.Error, want.Error) ||
		!maps.Equal(got.Attributes, want.Attributes) ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("%s returned %+v, want %+v", what, got, want)
	}
}
