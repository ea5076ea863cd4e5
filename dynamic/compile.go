package dynamic

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// filename is what positions in a source's errors are relative to.
const filename = "workflow.star"

// entry is the function a source must define; the run calls it with the
// run's input and returns what it returns.
const entry = "workflow"

// fileOptions is the Starlark dialect of dynamic sources: loops, sets and
// top-level statements as in Python; recursion stays off, so no source can
// exhaust the worker's stack.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// compile parses and resolves a source and checks what Start promises to
// check: it defines workflow(), loads nothing, and calls only the aliases
// it was given. Every error names its line.
func compile(code string, steps map[string]string) (*starlark.Program, error) {
	f, prog, err := starlark.SourceProgramOptions(fileOptions, filename, code, isBinding)
	if err != nil {
		return nil, err
	}
	var problems []string
	defined := false
	for _, stmt := range f.Stmts {
		switch s := stmt.(type) {
		case *syntax.LoadStmt:
			problems = append(problems, fmt.Sprintf("%s: load is not available: a source has no modules", s.Load))
		case *syntax.DefStmt:
			if s.Name.Name == entry {
				defined = true
				if len(s.Params) > 1 {
					problems = append(problems, fmt.Sprintf("%s: %s takes at most one parameter, the run's input", s.Def, entry))
				}
			}
		}
	}
	if !defined {
		problems = append(problems, fmt.Sprintf("%s: the source defines no function %s(input)", filename, entry))
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		dot, ok := n.(*syntax.DotExpr)
		if !ok {
			return true
		}
		if id, ok := dot.X.(*syntax.Ident); ok && id.Name == "steps" && isPredeclared(id) {
			if _, bound := steps[dot.Name.Name]; !bound {
				problems = append(problems, fmt.Sprintf("%s: steps.%s: no step was given under that alias (given: %s)",
					dot.Name.NamePos, dot.Name.Name, strings.Join(slices.Sorted(maps.Keys(steps)), ", ")))
			}
		}
		return true
	})
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return prog, nil
}

// isPredeclared says whether an identifier refers to a binding rather
// than to a name the source defined itself.
func isPredeclared(id *syntax.Ident) bool {
	b, ok := id.Binding.(*resolve.Binding)
	return ok && b.Scope == resolve.Predeclared
}
