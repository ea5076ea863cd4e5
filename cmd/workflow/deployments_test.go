package main

import (
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/world"
)

func TestDeploymentsCountsTheRunsInFlightOnEach(t *testing.T) {
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			on := func(d string) map[string]string { return map[string]string{"$deployment": d} }
			createRuns(t, tw,
				world.Run{ID: "run-1a", Workflow: "checkout", Status: world.StatusRunning, Attributes: on("7")},
				world.Run{ID: "run-1b", Workflow: "refund", Status: world.StatusRunning, Attributes: on("7")},
				world.Run{ID: "run-2", Workflow: "checkout", Status: world.StatusRunning, Attributes: on("8")},
				world.Run{ID: "run-new", Workflow: "checkout", Status: world.StatusPending},
				world.Run{ID: "run-done", Workflow: "checkout", Status: world.StatusCompleted, Attributes: on("6")},
			)
			out, err := cliOn(t.Context(), tw, "", "deployments")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Fields(out)
			want := strings.Fields("DEPLOYMENT RUNS IN FLIGHT (not started) 1 7 2 8 1")
			if strings.Join(lines, " ") != strings.Join(want, " ") {
				t.Fatalf("deployments:\n%s\nwant the counts of 7, 8 and the unstarted run, and not 6 (its only run ended)", out)
			}
			out, err = cliOn(t.Context(), tw, "", "inspect", "run", "run-2")
			if err != nil || !strings.Contains(out, "pinned to 8") {
				t.Fatalf("inspect run shows the deployment:\n%s%v", out, err)
			}
		})
	}
}
