// Command workflowcheck reports code that breaks replay in the workflow
// functions of the packages it is given:
//
//	go run github.com/lambdaworkflow/workflow/workflowcheck/cmd/workflowcheck@latest ./...
//
// See package workflowcheck for what it reports and how to silence a
// finding.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/lambdaworkflow/workflow/workflowcheck"
)

func main() { singlechecker.Main(workflowcheck.Analyzer) }
