package bedrock_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The Bedrock Runtime client reaches only programs that import this
// package: neither the root package nor package agent depends on it.
func TestRootAndAgentDoNotDependOnBedrock(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	for _, pkg := range []string{"github.com/lambdaworkflow/workflow", "github.com/lambdaworkflow/workflow/agent"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			if strings.Contains(dep, "bedrockruntime") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
