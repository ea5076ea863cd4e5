package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/world"
)

// A run's ID, workflow name, attributes and dynamic source are chosen by
// whoever starts it; the CLI must not let them drive the operator's
// terminal (an OSC sequence retitles the window, a carriage return
// overwrites what was printed before it, a bidi override reorders text).
func TestTerminalOutputEscapesControlCharacters(t *testing.T) {
	const hostile = "\x1b]0;pwned\x07\r\u202e"
	code := "def workflow(input):\n    return \"" + hostile + "\"\n"
	name, input := dynsource.Source{Code: code}.Store([]byte(`"x"`))
	for worldName, open := range openWorlds(t) {
		t.Run(worldName, func(t *testing.T) {
			tw := open(t)
			for _, r := range []world.Run{
				{ID: "run" + hostile, Workflow: "checkout" + hostile, Status: world.StatusRunning, Attributes: map[string]string{"customer": hostile}},
				{ID: "dyn" + hostile, Workflow: name, Status: world.StatusRunning, Input: input},
			} {
				created, _ := json.Marshal(map[string]string{"workflow": r.Workflow})
				r.CreatedAt = time.Now()
				if _, err := tw.CreateRun(t.Context(), r, []world.Event{{Type: world.RunCreated, Payload: created}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{
				{"inspect", "runs"},
				{"inspect", "run", "run" + hostile},
				{"inspect", "run", "dyn" + hostile},
				{"inspect", "run", "--json", "run" + hostile},
				{"cancel", "run" + hostile, "--reason", hostile},
			} {
				out, err := cliOn(t.Context(), tw, "", args...)
				if err != nil {
					t.Fatalf("%q: %v", args, err)
				}
				if strings.ContainsAny(out, "\x1b\x07\r\u202e") {
					t.Errorf("%q wrote control characters to the terminal:\n%q", args, out)
				}
				if !slices.Contains(args, "--json") && !strings.Contains(out, `\x1b]0;pwned\x07\x0d\u202e`) {
					t.Errorf("%q does not show the escaped text:\n%q", args, out)
				}
			}
		})
	}
}
