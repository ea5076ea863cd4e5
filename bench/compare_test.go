package bench

import (
	"strings"
	"testing"
)

func result(world string, peer bool, ttfsP75, longP50 float64) *Result {
	return &Result{World: world, Peer: peer, Metrics: []Metric{
		{Key: "ttfs", Stats: Summary{N: 1, P50: 99, P75: ttfsP75}},
		{Key: "long_overhead", Stats: Summary{N: 1, P50: longP50, P75: 99}},
	}}
}

// Each embedded World is divided by each peer on the compared statistic
// (p75, the median run for the long run), and each ratio is held to its
// World's target.
func TestCompareDividesEachWorldByEachPeer(t *testing.T) {
	ratios := Compare([]*Result{
		result("local", false, 0.5, 300),
		result("local-fullsync", false, 1.2, 900),
		result("memory", false, 0.1, 100), // no ratio target: not compared
		result("dbos", true, 1.0, 600),
		result("go-workflows", true, 0.4, 3000),
	})
	got := map[string]Ratio{}
	for _, r := range ratios {
		got[r.World+"/"+r.Peer+"/"+r.Metric] = r
	}
	if len(ratios) != 8 {
		t.Fatalf("%d ratios, want 8 (2 Worlds × 2 peers × 2 metrics): %+v", len(ratios), ratios)
	}
	for key, want := range map[string]struct {
		ratio float64
		pass  bool
	}{
		"local/dbos/ttfs":                   {0.5, true},
		"local/go-workflows/ttfs":           {1.25, false},
		"local/dbos/long_overhead":          {0.5, true},
		"local-fullsync/dbos/ttfs":          {1.2, true},
		"local-fullsync/dbos/long_overhead": {1.5, true},
		"local-fullsync/go-workflows/ttfs":  {3, true}, // no target against go-workflows
	} {
		r, ok := got[key]
		if !ok || r.Ratio != want.ratio || r.Pass() != want.pass {
			t.Errorf("%s = %+v (pass %v), want ratio %g pass %v", key, r, r.Pass(), want.ratio, want.pass)
		}
	}
	var out strings.Builder
	writeRatios(&out, ratios)
	if !strings.Contains(out.String(), "local ≤ 1× every peer on every metric: MISS on 1 of 4: ttfs vs go-workflows 1.25×") {
		t.Errorf("verdict missing from:\n%s", out.String())
	}
}
