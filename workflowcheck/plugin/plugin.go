// Package plugin makes workflowcheck a golangci-lint module plugin
// (https://golangci-lint.run/plugins/module-plugins/).
//
// `golangci-lint custom` builds a golangci-lint binary with the plugin from
// a .custom-gcl.yml beside your go.mod:
//
//	version: v2.15.0
//	name: golangci-lint-workflow
//	plugins:
//	  - module: github.com/lambdaworkflow/workflow/workflowcheck
//	    import: github.com/lambdaworkflow/workflow/workflowcheck/plugin
//	    version: latest # or vX.Y.Z (the tag workflowcheck/vX.Y.Z), or a commit
//	    # or, from a checkout of this repository:
//	    # path: ../workflow/workflowcheck
//
// and that binary runs it once .golangci.yml enables it:
//
//	version: "2"
//	linters:
//	  enable:
//	    - workflowcheck
//	  settings:
//	    custom:
//	      workflowcheck:
//	        type: module
//	        description: code that breaks replay in workflow functions
//	        original-url: github.com/lambdaworkflow/workflow/workflowcheck
//
// The plugin has no settings. Its module does not require the SDK (the
// analyzer knows it by import path), so the build resolves nothing but
// golang.org/x/tools and the registration package.
package plugin

import (
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/lambdaworkflow/workflow/workflowcheck"
)

func init() {
	register.Plugin("workflowcheck", New)
}

// New returns the plugin. It has no settings: the analyzer has no knobs,
// and a finding is silenced where it occurs with //workflowcheck:ignore.
func New(settings any) (register.LinterPlugin, error) {
	if _, err := register.DecodeSettings[struct{}](settings); err != nil {
		return nil, err
	}
	return linter{}, nil
}

type linter struct{}

func (linter) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{workflowcheck.Analyzer}, nil
}

// GetLoadMode asks for type information: the analyzer resolves calls.
func (linter) GetLoadMode() string { return register.LoadModeTypesInfo }
