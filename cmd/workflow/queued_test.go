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
			limiter := tw.World.(world.Limiter)
			limit := world.Limit{Workflow: "export", Key: "customer-7", Concurrency: 1}
			for _, id := range []string{"run-held", "run-waits"} {
				run := world.Run{ID: id, Workflow: "export", Status: world.StatusPending, CreatedAt: time.Now()}
				first := []world.Event{{Type: world.RunCreated, Payload: []byte(`{"workflow":"export","limit":{"key":"customer-7"}}`)}}
				if _, err := limiter.StartLimited(t.Context(), run, first, world.Message{RunID: id}, limit); err != nil {
					t.Fatal(err)
				}
			}
			cli := func(args ...string) (string, error) { return cliOn(t.Context(), tw, "", args...) }
			out, err := cli("inspect", "runs", "--status", "queued")
			if err != nil || !strings.Contains(out, "run-waits") || strings.Contains(out, "run-held") {
				t.Fatalf("--status queued:\n%s%v", out, err)
			}
			out, err = cli("inspect", "run", "run-waits")
			if err != nil || !strings.Contains(out, "status    queued") || !strings.Contains(out, "customer-7") {
				t.Fatalf("inspect run of a queued run:\n%s%v", out, err)
			}
		})
	}
}
