package functions_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack/iamcheck"
)

// template.yaml deploys the World, the flow and the webhook function and
// what operating them needs, and nothing of the examples, which deploy
// from a template of their own beside it (examples/aws/template.yaml): it
// has no function but those two, no resource or output of the examples'
// template, and names neither an example's code nor its parameters.
func TestTemplateHoldsNoExample(t *testing.T) {
	core, err := iamcheck.ReadTemplate("../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := iamcheck.ReadTemplate("../examples/aws/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := core.Functions(), []string{"FlowFunction", "WebhookFunction"}; !slices.Equal(got, want) {
		t.Errorf("template.yaml deploys functions %v, want %v", got, want)
	}
	for _, name := range examples.Resources() {
		if slices.Contains(core.Resources(), name) {
			t.Errorf("template.yaml holds the examples' resource %s", name)
		}
	}
	for _, name := range examples.Outputs() {
		if slices.Contains(core.Outputs(), name) {
			t.Errorf("template.yaml holds the examples' output %s", name)
		}
	}
	text, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, example := range regexp.MustCompile(`examples/(lambdaapp|flight)|bedrock:|ExampleApi|ApiThrottle|FlightModelId|FlightTimeout`).FindAllString(string(text), -1) {
		t.Errorf("template.yaml names %q, which is the examples'", example)
	}
}
