package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI a user installs links the SDK and its Worlds, and nothing of
// this repository's demos, agents or test rigs: its commands work on any
// application's runs because they never hold an application's code.
func TestTheCommandLinksNoDemoAgentOrTestCode(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/lambdaworkflow/workflow/"
	for dep := range strings.FieldsSeq(string(out)) {
		path, ours := strings.CutPrefix(dep, module)
		if !ours {
			continue
		}
		for _, banned := range []string{"examples/", "agent/", "internal/testrig/", "workflowtest/"} {
			if strings.HasPrefix(path+"/", banned) {
				t.Errorf("the command links %s", dep)
			}
		}
		for _, rig := range []string{"agenttest", "fakeprovider"} {
			if strings.Contains("/"+path+"/", "/"+rig+"/") {
				t.Errorf("the command links the test rig %s", dep)
			}
		}
	}
}

func TestARemovedCommandSaysWhatReplacesIt(t *testing.T) {
	err := run(t.Context(), []string{"replay", "--world", "aws"}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), `"replay" was removed`) || !strings.Contains(err.Error(), "workflow.ReplayRunning") {
		t.Fatalf("workflow replay: %v, want the message naming workflow.ReplayRunning", err)
	}
}
