package otel_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The OpenTelemetry SDK and its exporters reach a program only through
// this module: no package of the core module imports them (it speaks to
// the API alone), and the root package, the one every user imports, does
// not depend on them.
func TestOnlyThisModuleImportsTheSDK(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the core module's imports with: %v", err)
	}
	list := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
		cmd.Dir = ".." // the core module's root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	sdk := func(path string) bool {
		return strings.HasPrefix(path, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(path, "go.opentelemetry.io/otel/exporters")
	}
	for _, line := range list("-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if sdk(imp) {
				t.Errorf("%s imports %s: only module github.com/lambdaworkflow/workflow/otel may", pkg, imp)
			}
		}
	}
	for _, dep := range list("-deps", ".") {
		if sdk(dep) {
			t.Errorf("the root package depends on %s", dep)
		}
	}
}
