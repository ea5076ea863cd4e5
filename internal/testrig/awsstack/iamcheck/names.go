package iamcheck

import (
	"maps"
	"slices"
)

// Functions names the template's AWS::Serverless::Function resources.
func (t *Template) Functions() []string {
	var names []string
	for name, r := range t.resources {
		if typ := get(r, "Type"); typ != nil && typ.Value == "AWS::Serverless::Function" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Resources names the template's resources, sorted.
func (t *Template) Resources() []string { return slices.Sorted(maps.Keys(t.resources)) }

// Outputs names the template's outputs, sorted.
func (t *Template) Outputs() []string { return slices.Sorted(maps.Keys(t.outputs)) }
