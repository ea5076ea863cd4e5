package dynamic_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The interpreter reaches only programs that import this package: the
// root package, the CLI and the viewer (which show a dynamic run's source)
// do not depend on it.
func TestTheInterpreterStaysOutOfOtherBuilds(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", ".", "./viewer", "./cmd/workflow")
	cmd.Dir = ".." // the module's root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(dep, "go.starlark.net") {
			t.Errorf("the root package, the viewer or the CLI depends on %s", dep)
		}
	}
}
