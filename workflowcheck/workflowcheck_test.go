package workflowcheck_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/lambdaworkflow/workflow/workflowcheck"
)

// TestAnalyzer runs the analyzer over the testdata module, which imports the
// SDK from this checkout (testdata/go.work), so the rules are checked against
// the real API, not a copy of it. Each // want comment is a diagnostic the
// analyzer must report on its line; a line without one must get none. The
// packages (one load of the standard library for all of them):
//
//   - rules: every rule, broken once in workflow code;
//   - allowed: the workflow-safe forms, step code and code outside
//     workflows, where nothing may be reported;
//   - transitive: helpers reached from workflow code by calls, function
//     values and methods, named in the diagnostic;
//   - ignore: //workflowcheck:ignore trailing a line, above a statement and
//     in a doc comment.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), workflowcheck.Analyzer, "./rules", "./allowed", "./transitive", "./ignore")
}
