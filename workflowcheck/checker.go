package workflowcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// checker finds a package's workflow code and reports what breaks replay in it.
type checker struct {
	pass  *analysis.Pass
	decls map[*types.Func]*ast.FuncDecl
	// steps maps a function registered with DefineStep (a func, or a
	// variable holding a literal) to the variable holding its Step, "" if
	// none does.
	steps   map[types.Object]string
	ignored ignoredLines
	// queue holds workflow code still to check; queued keeps each function
	// from being checked twice.
	queue  []workflowCode
	queued map[ast.Node]bool
	// reported keeps a construct reached along two paths from being
	// reported twice.
	reported map[token.Pos]bool
}

// workflowCode is a function body to check and the calls that reached it
// from a workflow function (none for a workflow function itself).
type workflowCode struct {
	fn  ast.Node // *ast.FuncDecl or *ast.FuncLit
	via []string
}

func newChecker(pass *analysis.Pass) *checker {
	return &checker{
		pass:     pass,
		decls:    map[*types.Func]*ast.FuncDecl{},
		steps:    map[types.Object]string{},
		ignored:  findIgnored(pass),
		queued:   map[ast.Node]bool{},
		reported: map[token.Pos]bool{},
	}
}

// findRoots indexes the package's functions and step registrations, then
// queues its workflow functions: those a directive silences stay out.
func (c *checker) findRoots() {
	for _, f := range c.pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if fn, ok := c.pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					c.decls[fn] = fd
				}
			}
		}
	}
	for _, f := range c.pass.Files {
		ast.Inspect(f, c.findSteps)
	}
	for _, f := range c.pass.Files {
		ast.Inspect(f, c.findWorkflows)
	}
}

// findSteps notes the functions registered with DefineStep.
func (c *checker) findSteps(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.ValueSpec:
		for i, v := range n.Values {
			if i < len(n.Names) {
				c.noteStep(v, n.Names[i].Name)
			}
		}
	case *ast.AssignStmt:
		if len(n.Lhs) != len(n.Rhs) {
			break
		}
		for i, v := range n.Rhs {
			if id, ok := n.Lhs[i].(*ast.Ident); ok {
				c.noteStep(v, id.Name)
			}
		}
	case *ast.CallExpr:
		c.noteStep(n, "")
	}
	return true
}

// findWorkflows queues the functions that are workflow code by themselves.
func (c *checker) findWorkflows(n ast.Node) bool {
	if n == nil || c.ignored.covers(c.pass.Fset, n) {
		return false
	}
	switch n := n.(type) {
	case *ast.FuncDecl:
		if fn, ok := c.pass.TypesInfo.Defs[n.Name].(*types.Func); ok && takesContext(fn.Signature()) {
			c.enqueue(n, nil)
		}
	case *ast.FuncLit:
		if sig, ok := c.pass.TypesInfo.TypeOf(n).(*types.Signature); ok && takesContext(sig) {
			c.enqueue(n, nil)
		}
	case *ast.CallExpr:
		callee := typeutil.Callee(c.pass.TypesInfo, n)
		switch {
		case isWorkflowFunc(callee, "DefineStep"):
			return false // step code: never workflow code
		case isWorkflowFunc(callee, "Define"):
			c.enqueueFuncValue(funcArg(n), nil)
		}
	}
	return true
}

// noteStep records the function registered by e, if e is a DefineStep call,
// under the step variable's name (or, unnamed, the step's type).
func (c *checker) noteStep(e ast.Expr, stepVar string) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || !isWorkflowFunc(typeutil.Callee(c.pass.TypesInfo, call), "DefineStep") {
		return
	}
	var obj types.Object
	switch fn := funcArg(call).(type) {
	case *ast.Ident:
		obj = c.pass.TypesInfo.Uses[fn]
	case *ast.SelectorExpr:
		obj = c.pass.TypesInfo.Uses[fn.Sel]
	}
	if obj == nil {
		return
	}
	if fn, ok := obj.(*types.Func); ok {
		obj = fn.Origin()
	}
	if _, named := c.steps[obj]; named && stepVar == "" {
		return // the declaration that holds the step named it already
	}
	c.steps[obj] = stepVar
}

// enqueue queues a function body for checking, once.
func (c *checker) enqueue(fn ast.Node, via []string) {
	if c.queued[fn] || c.ignored.covers(c.pass.Fset, fn) {
		return
	}
	if fd, ok := fn.(*ast.FuncDecl); ok && (fd.Body == nil || hasIgnoreDirective(fd.Doc)) {
		return
	}
	c.queued[fn] = true
	c.queue = append(c.queue, workflowCode{fn: fn, via: via})
}

// enqueueFuncValue queues the function e denotes if its body is in this package.
func (c *checker) enqueueFuncValue(e ast.Expr, via []string) {
	switch e := e.(type) {
	case *ast.FuncLit:
		c.enqueue(e, via)
	case *ast.Ident:
		c.enqueueFunc(c.pass.TypesInfo.Uses[e], via)
	case *ast.SelectorExpr:
		c.enqueueFunc(c.pass.TypesInfo.Uses[e.Sel], via)
	}
}

func (c *checker) enqueueFunc(obj types.Object, via []string) {
	fn, ok := obj.(*types.Func)
	if !ok {
		return
	}
	if _, isStep := c.steps[fn.Origin()]; isStep {
		return // step code; a direct call of it is reported as such
	}
	if fd := c.decls[fn.Origin()]; fd != nil {
		c.enqueue(fd, append(via[:len(via):len(via)], funcName(fd)))
	}
}

// checkReachable checks the queued workflow code and, breadth first, the
// functions of the package it reaches, so that a construct is reported
// with the shortest chain of calls that leads to it.
func (c *checker) checkReachable() {
	for len(c.queue) > 0 {
		w := c.queue[0]
		c.queue = c.queue[1:]
		var body *ast.BlockStmt
		switch fn := w.fn.(type) {
		case *ast.FuncDecl:
			body = fn.Body
		case *ast.FuncLit:
			body = fn.Body
		}
		newWalker(c, w.via).walk(body)
	}
}

// report reports a construct once, naming the calls that reached it.
func (c *checker) report(n ast.Node, via []string, format string, args ...any) {
	if c.reported[n.Pos()] {
		return
	}
	c.reported[n.Pos()] = true
	msg := fmt.Sprintf(format, args...)
	if len(via) > 0 {
		what, fix, _ := strings.Cut(msg, ": ")
		msg = fmt.Sprintf("%s (reached via %s): %s", what, strings.Join(via, " → "), fix)
	}
	c.pass.Report(analysis.Diagnostic{Pos: n.Pos(), End: n.End(), Message: msg})
}

// funcName names a declared function as a reader finds it: F or T.M.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
