package functions_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docs/AWS.md's "Your own workflows" path, up to the deploy: its Go files
// written into a new module that requires the SDK and its functions module
// (replaced by this checkout), its `go get -tool` line run, the module
// vetted, and the flow and webhook functions built with lambda.mk copied as
// the module's Makefile, as the section says. TestOwnStack deploys the
// stack.
func TestOwnModuleFromTheDocsBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and cross-compiles two functions: not in -short mode")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, getTools := ownWorkflowsSection(t, filepath.Join(root, "docs", "AWS.md"))
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		// The module cache holds every module this checkout needs, and
		// the new module needs no others. Without GOPROXY=off, go get
		// would ask the proxy whether functions/webhook is a module of its
		// own, which the restricted proxies of CI answer with an error
		// rather than a 404. Neither a workspace nor this checkout's build
		// flags (an -overlay) apply.
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("go", "mod", "init", "example.com/app")
	// The SDK, its functions module and the otel module the functions set
	// up telemetry with, and the module of the functions' test rigs, which
	// go mod tidy reads for the tests of the webhook function (a tool of
	// the module).
	run("go", "mod", "edit",
		"-require=github.com/lambdaworkflow/workflow@v0.0.0", "-replace=github.com/lambdaworkflow/workflow="+root,
		"-require=github.com/lambdaworkflow/workflow/functions@v0.0.0", "-replace=github.com/lambdaworkflow/workflow/functions="+filepath.Join(root, "functions"),
		"-replace=github.com/lambdaworkflow/workflow/otel="+filepath.Join(root, "otel"),
		"-replace=github.com/lambdaworkflow/workflow/internal/testrig/awsstack="+filepath.Join(root, "internal", "testrig", "awsstack"))
	// The modules' checksums, which a user's go get would look up in the
	// checksum database, out of this machine's reach.
	for _, mod := range []string{".", "functions", "otel", "internal/testrig/awsstack"} {
		sums, err := os.ReadFile(filepath.Join(root, mod, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		files["go.sum"] += string(sums)
	}
	for path, code := range files {
		file := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(getTools...)
	run("go", "mod", "tidy")
	run("go", "vet", "./...")
	mk, err := os.ReadFile(filepath.Join(root, "functions", "lambda.mk"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), mk, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"FlowFunction", "WebhookFunction"} {
		out := filepath.Join(dir, "out", fn)
		run("make", "build-"+fn, "FLOW_PKG=./cmd/flow", "ARTIFACTS_DIR="+out)
		bin, err := os.ReadFile(filepath.Join(out, "bootstrap"))
		if err != nil || !bytes.HasPrefix(bin, []byte("\x7fELF")) {
			t.Fatalf("make build-%s made no Linux binary %s/bootstrap: %v", fn, out, err)
		}
	}
}

// ownWorkflowsSection returns the Go files of doc's "Your own workflows"
// section (each code block that starts with a comment naming its path)
// and its `go get -tool` command.
func ownWorkflowsSection(t *testing.T, doc string) (files map[string]string, getTools []string) {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(text), "\n## Your own workflows\n")
	section, _, _ = strings.Cut(section, "\n## ")
	files = map[string]string{}
	for _, block := range strings.Split(section, "```go\n")[1:] {
		code, _, _ := strings.Cut(block, "```")
		first, _, _ := strings.Cut(code, "\n")
		if path, ok := strings.CutPrefix(first, "// "); ok && strings.HasSuffix(path, ".go") {
			files[path] = code
		}
	}
	for line := range strings.Lines(section) {
		if strings.HasPrefix(line, "go get -tool ") {
			getTools = strings.Fields(line)
		}
	}
	if len(files) < 3 || getTools == nil {
		t.Fatalf("%s's section \"Your own workflows\" lost its files (found %d) or its `go get -tool` line", doc, len(files))
	}
	return files, getTools
}
