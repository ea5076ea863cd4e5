package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// gc deletes finished runs past the retention it is given and nothing
// else; on the AWS World it says that TTL does the work.
func TestGC(t *testing.T) {
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			createRuns(t, tw,
				world.Run{ID: "finished", Workflow: "checkout", Status: world.StatusRunning},
				world.Run{ID: "running", Workflow: "checkout", Status: world.StatusRunning},
			)
			done := []world.Event{{Type: world.RunCompleted, CreatedAt: time.Now()}}
			if _, err := tw.AppendEvents(t.Context(), "finished", 2, done, &world.RunUpdate{Status: world.StatusCompleted}); err != nil {
				t.Fatal(err)
			}
			cli := func(args ...string) string {
				out, err := cliOn(t.Context(), tw, "", args...)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				return out
			}
			if name == "aws" {
				if out := cli("gc"); !strings.Contains(out, "expire by themselves") {
					t.Errorf("gc on the AWS World:\n%s", out)
				}
				return
			}
			if out := cli("gc"); !strings.Contains(out, "deleted 0 runs") {
				t.Errorf("gc with the default retention deleted a run that just finished:\n%s", out)
			}
			if out := cli("gc", "--retention", "0"); !strings.Contains(out, "deleted 0 runs") {
				t.Errorf("gc --retention 0 deleted a run:\n%s", out)
			}
			time.Sleep(2 * time.Millisecond)
			if out := cli("gc", "--retention", "1ms"); !strings.Contains(out, "deleted 1 runs") {
				t.Errorf("gc --retention 1ms:\n%s", out)
			}
			if _, err := tw.GetRun(t.Context(), "finished"); !errors.Is(err, world.ErrRunNotFound) {
				t.Errorf("the finished run after gc: %v", err)
			}
			if r, err := tw.GetRun(t.Context(), "running"); err != nil || r.Status != world.StatusRunning {
				t.Errorf("the running run after gc: %+v, %v", r, err)
			}
		})
	}
}
