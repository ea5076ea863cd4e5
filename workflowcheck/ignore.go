package workflowcheck

import (
	"go/ast"
	"go/token"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// ignoreDirective starts a comment that silences the analyzer; the text
// after it says why.
const ignoreDirective = "//workflowcheck:ignore"

// ignoredLines holds, per file, the lines whose constructs are silenced.
type ignoredLines map[*token.File]map[int]bool

// findIgnored finds the lines every directive silences: its own line when
// it trails code, else the line after it.
func findIgnored(pass *analysis.Pass) ignoredLines {
	ignored := ignoredLines{}
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.Pos())
		var directives []*ast.Comment
		for _, group := range f.Comments {
			for _, c := range group.List {
				if strings.HasPrefix(c.Text, ignoreDirective) {
					directives = append(directives, c)
				}
			}
		}
		if len(directives) == 0 {
			continue
		}
		codeStarts := firstColumns(tf, f)
		lines := map[int]bool{}
		for _, c := range directives {
			pos := tf.Position(c.Pos())
			if col, ok := codeStarts[pos.Line]; ok && col < pos.Column {
				lines[pos.Line] = true
			} else {
				lines[pos.Line+1] = true
			}
		}
		ignored[tf] = lines
	}
	return ignored
}

// firstColumns maps each line on which code starts to the column of its
// first token.
func firstColumns(tf *token.File, f *ast.File) map[int]int {
	cols := map[int]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n.(type) {
		case nil, *ast.Comment, *ast.CommentGroup:
			return false
		}
		pos := tf.Position(n.Pos())
		if col, ok := cols[pos.Line]; !ok || pos.Column < col {
			cols[pos.Line] = pos.Column
		}
		return true
	})
	return cols
}

// covers reports whether a directive silences n (and so everything in it).
func (ig ignoredLines) covers(fset *token.FileSet, n ast.Node) bool {
	tf := fset.File(n.Pos())
	return tf != nil && ig[tf][tf.Line(n.Pos())]
}

// hasIgnoreDirective reports whether a doc comment holds the directive.
func hasIgnoreDirective(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.HasPrefix(c.Text, ignoreDirective) {
			return true
		}
	}
	return false
}
