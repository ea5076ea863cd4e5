package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The engine names package dynamic and internal/dynsource use are the
// ones dynamic_surface.go lists: a new one is a change of that surface,
// made on purpose and written down there.
func TestDynamicSurface(t *testing.T) {
	listed := listedSurface(t)
	var used []string
	for _, dir := range []string{"../../dynamic", "../dynsource"} {
		used = append(used, engineNamesUsed(t, dir)...)
	}
	slices.Sort(used)
	used = slices.Compact(used)
	if !slices.Equal(used, listed) {
		t.Errorf("dynamic uses of the engine %v;\ndynamic_surface.go lists %v", used, listed)
	}
}

// listedSurface reads the list in dynamic_surface.go's comment on the
// surface of dynamic runs.
func listedSurface(t *testing.T) []string {
	src, err := os.ReadFile("dynamic_surface.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "// The surface of dynamic runs")
	end := strings.Index(text, "\n\n// DynamicPrefix")
	if start < 0 || end < start {
		t.Fatal("dynamic_surface.go has no comment on the surface of dynamic runs")
	}
	list := text[strings.Index(text[start:end], "//   - ")+start : end]
	names := regexp.MustCompile(`\b[A-Z][A-Za-z]*\b`).FindAllString(list, -1)
	slices.Sort(names)
	return slices.Compact(names)
}

// engineNamesUsed lists the engine's names the non-test Go files of dir
// refer to.
func engineNamesUsed(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/lambdaworkflow/workflow/internal/engine" {
				local = "engine"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					names = append(names, sel.Sel.Name)
				}
			}
			return true
		})
	}
	return names
}
