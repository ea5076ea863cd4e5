package plugin_test

import (
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"github.com/lambdaworkflow/workflow/workflowcheck"
	_ "github.com/lambdaworkflow/workflow/workflowcheck/plugin"
)

// golangci-lint finds the plugin by the name .golangci.yml enables, builds
// it from the settings there, and runs the analyzers it returns with the
// load mode it asks for.
func TestRegistered(t *testing.T) {
	newPlugin, err := register.GetPlugin("workflowcheck")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(nil)
	if err != nil {
		t.Fatalf("no settings: %v", err)
	}
	analyzers, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	if len(analyzers) != 1 || analyzers[0] != workflowcheck.Analyzer {
		t.Fatalf("analyzers = %v, want workflowcheck.Analyzer alone", analyzers)
	}
	if got := p.GetLoadMode(); got != register.LoadModeTypesInfo {
		t.Fatalf("load mode %q, want %q: the analyzer needs type information", got, register.LoadModeTypesInfo)
	}
}

// A setting the plugin does not have is a typo in .golangci.yml: refused.
func TestUnknownSettingRefused(t *testing.T) {
	newPlugin, err := register.GetPlugin("workflowcheck")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPlugin(map[string]any{"strict": true}); err == nil {
		t.Fatal("a setting the plugin does not have was accepted")
	}
}
