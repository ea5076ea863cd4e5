package workflow_test

import (
	"os"
	"strings"
	"testing"
)

// The README's example is the marked region of examples/hello, which the
// build compiles and vets; this test keeps the two identical.
func TestReadmeExampleIsCompiledCode(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("examples/hello/main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(src), "// README:begin\n")
	region, _, ok2 := strings.Cut(region, "// README:end")
	if !ok || !ok2 {
		t.Fatal("examples/hello/main.go lost its README:begin/end markers")
	}
	block := "```go\n" + strings.TrimRight(region, "\n") + "\n```"
	if !strings.Contains(string(readme), block) {
		t.Fatalf("README.md's Go example differs from examples/hello/main.go; paste this into README.md:\n%s", block)
	}
	if lines := strings.Count(region, "\n"); lines > 30 {
		t.Errorf("the README example has grown to %d lines", lines)
	}
}
