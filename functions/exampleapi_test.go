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

// Every resource of the example API, and every output naming one, carries
// one of template.yaml's ExampleApi conditions, so that a stack deployed
// with ExampleApi=none holds none of them. The API's resources are those
// named Api..., whatever refers to one of them (a permission, a stage),
// and whatever only they refer to (a log group, a secret): a resource
// added to the API later is found whatever its name, as long as it is
// tied to the others.
func TestExampleAPIResourcesAreConditional(t *testing.T) {
	b, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	resources := mapping(t, field(doc.Content[0], "Resources"))
	refs := map[string][]string{} // resource → the resources it refers to
	for name, r := range resources {
		refs[name] = referenced(r, resources)
	}
	api := map[string]bool{}
	for name := range resources {
		api[name] = strings.HasPrefix(name, "Api")
	}
	for grown := true; grown; {
		grown = false
		for name := range resources {
			if api[name] {
				continue
			}
			refersToAPI := slices.ContainsFunc(refs[name], func(r string) bool { return api[r] })
			var users []string
			for user, rs := range refs {
				if slices.Contains(rs, name) {
					users = append(users, user)
				}
			}
			onlyAPIUses := len(users) > 0 && !slices.ContainsFunc(users, func(u string) bool { return !api[u] })
			if refersToAPI || onlyAPIUses {
				api[name], grown = true, true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(api)) {
		if !api[name] {
			continue
		}
		if c := field(resources[name], "Condition"); c == nil || !strings.HasPrefix(c.Value, "ExampleApi") {
			t.Errorf("resource %s is part of the example API but has no ExampleApi condition", name)
		}
	}
	for name, out := range mapping(t, field(doc.Content[0], "Outputs")) {
		if !slices.ContainsFunc(referenced(out, resources), func(r string) bool { return api[r] }) {
			continue
		}
		if c := field(out, "Condition"); c == nil || !strings.HasPrefix(c.Value, "ExampleApi") {
			t.Errorf("output %s names the example API but has no ExampleApi condition", name)
		}
	}
}

// subRefs are the names a !Sub string refers to: ${Name} or ${Name.Attr}.
var subRefs = regexp.MustCompile(`\$\{([A-Za-z0-9]+)[.}]`)

// referenced lists the resources node refers to by !Ref, !GetAtt, !Sub
// or DependsOn, in short or long form.
func referenced(node *yaml.Node, resources map[string]*yaml.Node) []string {
	var names []string
	add := func(s string) {
		name, _, _ := strings.Cut(s, ".") // X.Arn, X.Alias
		if _, ok := resources[name]; ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		switch {
		case n.Kind == yaml.ScalarNode && (n.Tag == "!Ref" || n.Tag == "!GetAtt" || key == "Ref" || key == "Fn::GetAtt" || key == "DependsOn"):
			add(n.Value)
		case n.Kind == yaml.ScalarNode && (n.Tag == "!Sub" || key == "Fn::Sub"):
			for _, m := range subRefs.FindAllStringSubmatch(n.Value, -1) {
				add(m[1])
			}
		case n.Kind == yaml.SequenceNode && (n.Tag == "!GetAtt" || key == "Fn::GetAtt") && len(n.Content) > 0:
			add(n.Content[0].Value)
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], n.Content[i].Value)
			}
			return
		}
		for _, c := range n.Content {
			inherited := ""
			if n.Tag == "!Sub" || key == "Fn::Sub" || key == "DependsOn" {
				inherited = key // a !Sub's template and variables, DependsOn's list
				if n.Tag == "!Sub" {
					inherited = "Fn::Sub"
				}
			}
			walk(c, inherited)
		}
	}
	walk(node, "")
	return names
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
		t.Fatal("template.yaml: expected a mapping")
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}
