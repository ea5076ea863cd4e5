package iamcheck

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/internal/testrig/awsstack"
)

// Compare returns the grants no need uses and the needs no grant covers. A
// grant covers a need of its action on a resource its pattern matches.
func Compare(needs, grants []Grant) (unused, missing []Grant) {
	covers := func(g, n Grant) bool { return g.Action == n.Action && matches(g.Resource, n.Resource) }
	for _, g := range grants {
		if !anyOf(needs, func(n Grant) bool { return covers(g, n) }) {
			unused = append(unused, g)
		}
	}
	for _, n := range needs {
		if !anyOf(grants, func(g Grant) bool { return covers(g, n) }) {
			missing = append(missing, n)
		}
	}
	return unused, missing
}

func anyOf(gs []Grant, f func(Grant) bool) bool {
	for _, g := range gs {
		if f(g) {
			return true
		}
	}
	return false
}

// matches reports whether an IAM resource pattern matches resource: "*"
// stands for any characters, "/" included, and "?" for any one.
func matches(pattern, resource string) bool {
	var re strings.Builder
	re.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(resource)
}

// Check fails t unless tmpl grants function exactly what the calls r
// recorded need, besides what its event source mappings need.
func Check(t testing.TB, tmpl *Template, function string, r *Recorder) {
	t.Helper()
	needs, err := r.Needs()
	if err != nil {
		t.Fatal(err)
	}
	polling, err := tmpl.EventSourceNeeds(function)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := tmpl.Grants(function)
	if err != nil {
		t.Errorf("the template's grants to %s: %v", function, err)
	}
	unused, missing := Compare(append(needs, polling...), grants)
	for _, g := range unused {
		t.Errorf("the template grants %s %s, which its code never needed", function, g)
	}
	for _, n := range missing {
		t.Errorf("%s's code called for %s, which the template does not grant it", function, n)
	}
	if t.Failed() {
		t.Logf("what %s's code needed:", function)
		for _, n := range needs {
			t.Logf("  %s", n)
		}
	}
}

// LoadTemplate reads the repository's template.yaml and, merged into it,
// the templates at paths beside (relative to the repository's root):
// stacks deployed beside it, whose parameters named after its outputs
// stand for those outputs (Beside).
func LoadTemplate(t testing.TB, beside ...string) *Template {
	t.Helper()
	root := awsstack.Root(t)
	tmpl, err := ReadTemplate(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range beside {
		other, err := ReadTemplate(filepath.Join(root, filepath.FromSlash(path)))
		if err == nil {
			err = tmpl.Beside(other)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return tmpl
}
