package main

import (
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/world"
)

// inspect run shows a dynamic run's stored code with the line numbers its
// errors cite, its hash and its step map; a stored code that no longer
// matches its hash, or that its run's codec sealed, is reported, not
// shown.
func TestInspectShowsADynamicRunsSource(t *testing.T) {
	code := "def workflow(input):\n    return steps.tag(input)\n"
	name, input := dynsource.Source{Code: code, Steps: map[string]string{"tag": "orders.tag"}}.Store([]byte(`"x"`))
	tampered := []byte(strings.Replace(string(input), "steps.tag", "steps.tog", 1))
	sealed := []byte(`{"$sealed":"AAEC"}`)
	for worldName, open := range openWorlds(t) {
		t.Run(worldName, func(t *testing.T) {
			tw := open(t)
			createRuns(t, tw,
				world.Run{ID: "dyn-a", Workflow: name, Status: world.StatusRunning, Input: input},
				world.Run{ID: "dyn-b", Workflow: name, Status: world.StatusRunning, Input: tampered},
				world.Run{ID: "dyn-c", Workflow: name, Status: world.StatusRunning, Input: sealed},
			)
			out, err := cliOn(t.Context(), tw, "", "inspect", "run", "dyn-a")
			if err != nil || !strings.Contains(out, "sha256:"+dynsource.Hash(code)+"  steps: tag=orders.tag") ||
				!strings.Contains(out, "   2      return steps.tag(input)\n") {
				t.Errorf("inspect run of a dynamic run:\n%s%v", out, err)
			}
			out, err = cliOn(t.Context(), tw, "", "inspect", "run", "dyn-b")
			if err != nil || !strings.Contains(out, "source    unreadable: dynamic workflow: the stored source hashes to") || strings.Contains(out, "return steps.tog") {
				t.Errorf("inspect run of a dynamic run whose code changed under its hash:\n%s%v", out, err)
			}
			out, err = cliOn(t.Context(), tw, "", "inspect", "run", "dyn-c")
			if err != nil || !strings.Contains(out, "source    unreadable: the stored source is sealed by the run's payload codec") {
				t.Errorf("inspect run of a sealed dynamic run:\n%s%v", out, err)
			}
		})
	}
}
