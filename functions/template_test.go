package functions_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// template.yaml deploys the World, the flow and the webhook function and
// what operating them needs, and nothing of the examples, which deploy
// from a template of their own beside it (examples/aws/template.yaml): it
// has no function but those two, no resource or output of the examples'
// template, and names neither an example's code nor its parameters.
func TestTemplateHoldsNoExample(t *testing.T) {
	core, examples := readTemplate(t, "../template.yaml"), readTemplate(t, "../examples/aws/template.yaml")
	coreResources := mapping(t, field(core, "Resources"))
	for name, r := range coreResources {
		if typ := field(r, "Type"); typ != nil && typ.Value == "AWS::Serverless::Function" && name != "FlowFunction" && name != "WebhookFunction" {
			t.Errorf("template.yaml deploys function %s", name)
		}
	}
	for _, section := range []string{"Resources", "Outputs"} {
		ours := mapping(t, field(core, section))
		for _, name := range slices.Sorted(maps.Keys(mapping(t, field(examples, section)))) {
			if _, ok := ours[name]; ok {
				t.Errorf("template.yaml holds the examples' %s %s", strings.ToLower(strings.TrimSuffix(section, "s")), name)
			}
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

// readTemplate parses the template at path and returns its top mapping.
func readTemplate(t *testing.T, path string) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.Content[0]
}

func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func mapping(t *testing.T, n *yaml.Node) map[string]*yaml.Node {
	t.Helper()
	if n == nil || n.Kind != yaml.MappingNode {
		t.Fatal("expected a mapping")
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}
