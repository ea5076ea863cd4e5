package agent_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The mapping in docs/AGENTS.md must cover every node hook and every AI
// page it maps, each row naming tests, and every test a table of the page
// names must exist, so the page cannot rot as tests are renamed.
var (
	mappedHooks = []string{"useReason", "useTool", "useInterrupt", "useStructuredData", "reportError", "useWorkflow",
		"createWorkflowHooks", "useNodeState", "useWorkflowState", "useRuntimeContext", "useAbortSignal"}
	mappedPages = []string{"/docs/ai)", "/docs/ai/streaming-updates-from-tools)", "/docs/ai/resumable-streams)", "/docs/ai/sleep-and-delays)",
		"/docs/ai/human-in-the-loop)", "/docs/ai/defining-tools)", "/docs/ai/chat-session-modeling)", "/docs/ai/message-queueing)"}
	testName = regexp.MustCompile("`((?:Test|Example)[A-Za-z0-9_]+)(?:/[^`]*)?`")
)

func TestMappingNamesTestsThatExist(t *testing.T) {
	doc, err := os.ReadFile("../docs/AGENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := testFuncs(t, "..")
	_, mapping, ok := strings.Cut(string(doc), "\n## Mapping to the documents\n")
	if !ok {
		t.Fatal("docs/AGENTS.md has no mapping section")
	}
	if i := strings.Index(mapping, "\n## "); i >= 0 {
		mapping = mapping[:i]
	}
	var subjects strings.Builder
	for _, row := range tableRows(mapping) {
		cells := strings.Split(strings.Trim(row, "|"), "|")
		subjects.WriteString(cells[0])
		if !testName.MatchString(cells[len(cells)-1]) {
			t.Errorf("row %q names no test", cells[0])
		}
	}
	for _, want := range append(mappedHooks, mappedPages...) {
		if !strings.Contains(subjects.String(), want) {
			t.Errorf("the mapping has no row for %s", want)
		}
	}
	for _, row := range tableRows(string(doc)) {
		cells := strings.Split(row, "|")
		for _, m := range testName.FindAllStringSubmatch(cells[len(cells)-2], -1) {
			if !defined[m[1]] {
				t.Errorf("docs/AGENTS.md names %s, which no test file defines", m[1])
			}
		}
	}
}

// tableRows returns the body rows of the Markdown tables in text.
func tableRows(text string) []string {
	var rows []string
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---") && !strings.HasPrefix(line, "| hook |") && !strings.HasPrefix(line, "| page |") && !strings.HasPrefix(line, "| concept |") {
			rows = append(rows, line)
		}
	}
	return rows
}

// testFuncs returns the names of the Test and Example functions of every
// test file under root.
func testFuncs(t *testing.T, root string) map[string]bool {
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Example)[A-Za-z0-9_]+)\(`)
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
