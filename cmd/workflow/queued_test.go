package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// TestQueuedRunsAreVisible: a run waiting for a slot of its workflow's
// concurrency limit is listed by --status queued and shown as queued,
// with the limit's key in its run_created, on every World.
func TestQueuedRunsAreVisible(t *testing.T) {
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			limit := world.Limit{Workflow: "export", Key: "customer-7", Concurrency: 1}
			start := func(id, key string) {
				run := world.Run{ID: id, Workflow: "export", Status: world.StatusPending, CreatedAt: time.Now()}
				first := []world.Event{{Type: world.RunCreated, Payload: []byte(`{"workflow":"export","limit":{"key":"` + key + `"}}`)}}
				limit := limit
				limit.Key = key
				if _, err := tw.StartLimited(t.Context(), run, first, world.Message{RunID: id}, limit); err != nil {
					t.Fatal(err)
				}
			}
			start("run-held", "customer-7")
			start("run-waits", "customer-7")
			start("other-held", "customer-8")
			start("other-waits", "customer-8")
			start("run-waits-too", "customer-7")
			cli := func(args ...string) (string, error) { return cliOn(t.Context(), tw, "", args...) }
			out, err := cli("inspect", "runs", "--status", "queued")
			if err != nil || !strings.Contains(out, "run-waits") || strings.Contains(out, "run-held") {
				t.Fatalf("--status queued:\n%s%v", out, err)
			}
			out, err = cli("inspect", "run", "run-waits")
			if err != nil || !strings.Contains(out, "status    queued") || !strings.Contains(out, "customer-7") {
				t.Fatalf("inspect run of a queued run:\n%s%v", out, err)
			}
			for id, want := range map[string]string{
				"run-waits":     `queue     1 of 2 queued under key "customer-7" (0 ahead)`,
				"run-waits-too": `queue     2 of 2 queued under key "customer-7" (1 ahead)`,
				"other-waits":   `queue     1 of 1 queued under key "customer-8" (0 ahead)`,
			} {
				if out, err := cli("inspect", "run", id); err != nil || !strings.Contains(out, want) {
					t.Errorf("inspect run %s, want %q:\n%s%v", id, want, out, err)
				}
			}
			if out, _ := cli("inspect", "run", "run-held"); strings.Contains(out, "queue ") {
				t.Errorf("inspect run of a run holding its slot shows a queue place:\n%s", out)
			}
		})
	}
}
