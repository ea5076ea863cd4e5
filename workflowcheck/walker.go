package workflowcheck

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// walker checks one function body of workflow code.
type walker struct {
	c   *checker
	via []string
	// inSelect holds the sends and receives of select cases: the select
	// is reported, not each of them.
	inSelect map[ast.Node]bool
	// sorted holds maps.Keys/Values/All calls whose order a sort or a map
	// erases.
	sorted map[ast.Node]bool
}

func newWalker(c *checker, via []string) *walker {
	return &walker{c: c, via: via, inSelect: map[ast.Node]bool{}, sorted: map[ast.Node]bool{}}
}

func (w *walker) walk(n ast.Node) {
	if n != nil {
		ast.Inspect(n, w.visit)
	}
}

func (w *walker) visit(n ast.Node) bool {
	if n == nil || w.c.ignored.covers(w.c.pass.Fset, n) {
		return false
	}
	switch n := n.(type) {
	case *ast.FuncLit:
		// A literal with a workflow.Context is workflow code of its own,
		// queued by findRoots; checking it here too would only repeat it.
		sig, ok := w.c.pass.TypesInfo.TypeOf(n).(*types.Signature)
		return !ok || !takesContext(sig)
	case *ast.CallExpr:
		return w.call(n)
	case *ast.Ident:
		w.ident(n)
	case *ast.GoStmt:
		w.c.report(n, w.via, msgGo)
	case *ast.SendStmt:
		if !w.inSelect[n] {
			w.c.report(n, w.via, msgSend)
		}
	case *ast.UnaryExpr:
		if n.Op == token.ARROW && !w.inSelect[n] {
			w.c.report(n, w.via, msgReceive)
		}
	case *ast.SelectStmt:
		w.c.report(n, w.via, msgSelect)
		w.markSelectCases(n)
	case *ast.RangeStmt:
		w.rangeStmt(n)
	}
	return true
}

// call checks a call and reports whether to look inside it.
func (w *walker) call(call *ast.CallExpr) bool {
	callee := typeutil.Callee(w.c.pass.TypesInfo, call)
	if fn, ok := callee.(*types.Func); ok {
		callee = fn.Origin()
	}
	if isWorkflowFunc(callee, "DefineStep") {
		return false // step code
	}
	if stepVar, ok := w.c.steps[callee]; ok {
		if stepVar == "" {
			w.c.report(call.Fun, w.via, msgStepCallUnnamed, callee.Name())
		} else {
			w.c.report(call.Fun, w.via, msgStepCall, callee.Name(), stepVar, stepVar)
		}
		for _, arg := range call.Args {
			w.walk(arg)
		}
		return false
	}
	switch {
	case isPkgFunc(callee, "maps", "Keys", "Values", "All"):
		if !w.sorted[call] {
			w.c.report(call, w.via, msgMapIter, "maps."+callee.Name())
		}
	case isPkgFunc(callee, "slices", "Sorted", "SortedFunc", "SortedStableFunc"),
		isPkgFunc(callee, "maps", "Collect", "Insert"):
		for _, arg := range call.Args {
			w.sorted[ast.Unparen(arg)] = true
		}
	}
	return true
}

// ident reports a use of a forbidden function or variable, or queues a
// function of the package that workflow code calls or takes as a value.
func (w *walker) ident(id *ast.Ident) {
	obj := w.c.pass.TypesInfo.Uses[id]
	if obj == nil {
		return
	}
	if r, ok := classify(obj); ok {
		w.c.report(id, w.via, "%s in workflow code: %s", r.what, r.fix)
		return
	}
	w.c.enqueueFunc(obj, w.via)
}

func (w *walker) markSelectCases(s *ast.SelectStmt) {
	for _, clause := range s.Body.List {
		switch comm := clause.(*ast.CommClause).Comm.(type) {
		case *ast.SendStmt:
			w.inSelect[comm] = true
		case *ast.ExprStmt:
			w.inSelect[ast.Unparen(comm.X)] = true
		case *ast.AssignStmt:
			w.inSelect[ast.Unparen(comm.Rhs[0])] = true
		}
	}
}

func (w *walker) rangeStmt(r *ast.RangeStmt) {
	t := w.c.pass.TypesInfo.TypeOf(r.X)
	if t == nil {
		return
	}
	switch t.Underlying().(type) {
	case *types.Map:
		// A loop that binds nothing (for range m, for _ = range m) only
		// counts, which is deterministic.
		if bindsNothing := r.Key == nil || isBlank(r.Key) && r.Value == nil; !bindsNothing {
			w.c.report(r, w.via, msgMapRange)
		}
	case *types.Chan:
		w.c.report(r, w.via, msgReceive)
	}
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// isPkgFunc reports whether obj is one of the named package-level functions of pkg.
func isPkgFunc(obj types.Object, pkg string, names ...string) bool {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != pkg || fn.Signature().Recv() != nil {
		return false
	}
	for _, name := range names {
		if fn.Name() == name {
			return true
		}
	}
	return false
}
