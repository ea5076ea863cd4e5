package peers

import (
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/bench"
)

// Every benchmark of the suite runs, tiny, on each peer: the peers'
// workflows record every mark the suite reads. It checks the harness, not
// the numbers.
func TestPeersRunTheSuite(t *testing.T) {
	cfg := bench.Smoke()
	for _, subj := range Subjects() {
		t.Run(subj.Name, func(t *testing.T) {
			res := bench.Run(t.Context(), subj, cfg, t.Logf)
			if res.Skipped != "" {
				t.Fatalf("skipped: %s", res.Skipped)
			}
			for _, n := range res.Notes {
				if !strings.HasPrefix(n, "chunk trip time not measured") {
					t.Errorf("note: %s", n)
				}
			}
			for _, key := range []string{"ttfs", "stso", "long_stso_1_20", "fan_first", "fan_last", "fan_join", "ttr"} {
				if m, ok := res.Metric(key); !ok || m.Stats.N == 0 {
					t.Errorf("metric %s missing", key)
				}
			}
			if m, _ := res.Metric("stso"); m.Stats.N != cfg.SeqRuns*(cfg.SeqSteps-1) {
				t.Errorf("stso has %d samples, want %d", m.Stats.N, cfg.SeqRuns*(cfg.SeqSteps-1))
			}
			if subj.Name == "dbos" {
				if m, _ := res.Metric("ctt"); m.Stats.N != cfg.StreamChunks {
					t.Errorf("ctt has %d samples, want %d", m.Stats.N, cfg.StreamChunks)
				}
			}
		})
	}
}
