package iamcheck

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Template is a SAM template's resources, as parsed YAML.
type Template struct {
	resources  map[string]*yaml.Node
	parameters map[string]*yaml.Node
	outputs    map[string]*yaml.Node
	globals    *yaml.Node // Globals.Function
	// besideGlobals is the Globals.Function of the template each resource
	// merged in by Beside came from.
	besideGlobals map[string]*yaml.Node
}

// ReadTemplate parses the template at path.
func ReadTemplate(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTemplate(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTemplate parses a template.
func ParseTemplate(b []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("an empty template")
	}
	res := get(doc.Content[0], "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil, errors.New("a template without Resources")
	}
	t := &Template{
		resources:  entries(res),
		parameters: entries(get(doc.Content[0], "Parameters")),
		outputs:    entries(get(doc.Content[0], "Outputs")),
		globals:    get(get(doc.Content[0], "Globals"), "Function"),
	}
	return t, nil
}

// Beside merges in the template of a stack deployed beside t's on t's
// outputs: each of other's parameters named after one of t's outputs
// stands for that output's value (a !Ref TableArn for !GetAtt Table.Arn,
// a ${BucketArn} in a !Sub for ${Bucket.Arn}), so that other's grants on
// t's resources read as t's own would. other's own parameters join t's.
func (t *Template) Beside(other *Template) error {
	var errs []error
	if t.besideGlobals == nil {
		t.besideGlobals = map[string]*yaml.Node{}
	}
	for id, r := range other.resources {
		if _, dup := t.resources[id]; dup {
			errs = append(errs, fmt.Errorf("resource %s is in both templates", id))
			continue
		}
		errs = append(errs, t.substituteOutputs(r, other.parameters))
		t.resources[id] = r
		t.besideGlobals[id] = other.globals
	}
	if other.globals != nil {
		errs = append(errs, t.substituteOutputs(other.globals, other.parameters))
	}
	for name, p := range other.parameters {
		if _, output := t.outputs[name]; !output {
			t.parameters[name] = p
		}
	}
	return errors.Join(errs...)
}

// substituteOutputs replaces, in n, each reference to one of params that
// is named after an output of t by that output's value.
func (t *Template) substituteOutputs(n *yaml.Node, params map[string]*yaml.Node) error {
	stands := func(name string) (*yaml.Node, bool) {
		_, param := params[name]
		out := get(t.outputs[name], "Value")
		return out, param && out != nil
	}
	switch {
	case n.Tag == "!Ref" && n.Kind == yaml.ScalarNode:
		if v, ok := stands(n.Value); ok {
			*n = *v
		}
		return nil
	case n.Tag == "!Sub" && n.Kind == yaml.ScalarNode:
		var err error
		n.Value = subRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			v, ok := stands(ref[2 : len(ref)-1])
			if !ok {
				return ref
			}
			s, rerr := render(v)
			if rerr != nil || strings.HasPrefix(s, "!If") {
				err = fmt.Errorf("line %d: %s stands for an output iamcheck cannot put in a !Sub", n.Line, ref)
				return ref
			}
			return s
		})
		return err
	}
	var errs []error
	for _, c := range n.Content {
		errs = append(errs, t.substituteOutputs(c, params))
	}
	return errors.Join(errs...)
}

// subRef matches a ${Name} reference of a !Sub.
var subRef = regexp.MustCompile(`\$\{[A-Za-z0-9]+\}`)

// Grants returns what the template allows function's role: the statements
// of its Policies (inline, or managed policies of the template it names)
// and of the template's policies attached to its role. It refuses what it
// cannot judge (a SAM policy template, an AWS managed policy, a role of the
// function's own), a wildcard action, and a resource that is not one of
// the stack's own.
func (t *Template) Grants(function string) ([]Grant, error) {
	fn, ok := t.resources[function]
	if !ok {
		return nil, fmt.Errorf("no resource %s", function)
	}
	props := get(fn, "Properties")
	if get(props, "Role") != nil {
		return nil, fmt.Errorf("%s names a role of its own; iamcheck reads only SAM's generated one", function)
	}
	var statements []*yaml.Node
	var errs []error
	if policies := get(props, "Policies"); policies != nil {
		for _, p := range policies.Content {
			s, err := t.policyStatements(p)
			statements = append(statements, s...)
			errs = append(errs, err)
		}
	}
	for _, id := range t.attachedPolicies(function + "Role") {
		s, err := documentStatements(get(get(t.resources[id], "Properties"), "PolicyDocument"))
		statements = append(statements, s...)
		errs = append(errs, err)
	}
	var grants []Grant
	for _, s := range statements {
		g, err := t.statementGrants(s)
		grants = append(grants, g...)
		errs = append(errs, err)
	}
	slices.SortFunc(grants, compareGrants)
	return slices.Compact(grants), errors.Join(errs...)
}

// Variable returns the expression the template sets a function's
// environment variable name to (its own, else the Globals'), as render
// writes it, or false if it sets none.
func (t *Template) Variable(function, name string) (string, bool) {
	globals, beside := t.besideGlobals[function]
	if !beside {
		globals = t.globals
	}
	for _, props := range []*yaml.Node{get(t.resources[function], "Properties"), globals} {
		if v := get(get(get(props, "Environment"), "Variables"), name); v != nil {
			s, err := render(v)
			return s, err == nil
		}
	}
	return "", false
}

// EventSourceNeeds returns what the event source mappings feeding function
// need of its role: Lambda polls an SQS queue with the function's
// permissions
// (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html#events-sqs-permissions).
func (t *Template) EventSourceNeeds(function string) ([]Grant, error) {
	var needs []Grant
	for id, r := range t.resources {
		if scalar(get(r, "Type")) != "AWS::Lambda::EventSourceMapping" {
			continue
		}
		props := get(r, "Properties")
		target, err := render(get(props, "FunctionName"))
		if err != nil {
			return nil, fmt.Errorf("%s: FunctionName: %w", id, err)
		}
		if target != "${"+function+"}" && target != "${"+function+".Alias}" && target != "${"+function+".Arn}" {
			continue
		}
		queue, err := render(get(props, "EventSourceArn"))
		if err != nil {
			return nil, fmt.Errorf("%s: EventSourceArn: %w", id, err)
		}
		for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"} {
			needs = append(needs, Grant{a, queue})
		}
	}
	return needs, nil
}

// policyStatements returns the statements of one entry of a function's
// Policies.
func (t *Template) policyStatements(p *yaml.Node) ([]*yaml.Node, error) {
	switch {
	case p.Tag == "!Ref":
		r, ok := t.resources[p.Value]
		if !ok || scalar(get(r, "Type")) != "AWS::IAM::ManagedPolicy" {
			return nil, fmt.Errorf("policy !Ref %s is not a managed policy of the template", p.Value)
		}
		return documentStatements(get(get(r, "Properties"), "PolicyDocument"))
	case p.Tag == "!If" && p.Kind == yaml.SequenceNode && len(p.Content) == 3:
		// Granted in some configuration: both branches count.
		var all []*yaml.Node
		var errs []error
		for _, branch := range p.Content[1:] {
			if branch.Tag == "!Ref" && branch.Value == "AWS::NoValue" {
				continue
			}
			s, err := t.policyStatements(branch)
			all = append(all, s...)
			errs = append(errs, err)
		}
		return all, errors.Join(errs...)
	case p.Kind == yaml.MappingNode && get(p, "Statement") != nil:
		return documentStatements(p)
	}
	return nil, fmt.Errorf("line %d: a policy iamcheck cannot read (a SAM policy template or an AWS managed policy?)", p.Line)
}

// attachedPolicies returns the template's policies whose Roles name role.
func (t *Template) attachedPolicies(role string) []string {
	var ids []string
	for id, r := range t.resources {
		if typ := scalar(get(r, "Type")); typ != "AWS::IAM::Policy" && typ != "AWS::IAM::ManagedPolicy" {
			continue
		}
		roles := get(get(r, "Properties"), "Roles")
		if roles != nil && slices.ContainsFunc(roles.Content, func(n *yaml.Node) bool { return n.Tag == "!Ref" && n.Value == role }) {
			ids = append(ids, id)
		}
	}
	return ids
}

func documentStatements(doc *yaml.Node) ([]*yaml.Node, error) {
	s := get(doc, "Statement")
	if s == nil {
		return nil, errors.New("a policy document without a Statement")
	}
	if s.Kind == yaml.MappingNode {
		return []*yaml.Node{s}, nil
	}
	return s.Content, nil
}

// entries is a mapping node's values by key.
func entries(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil || n.Kind != yaml.MappingNode {
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

// statementGrants returns each action of an Allow statement on each of its
// resources. A Condition only narrows a grant, so it is not read.
func (t *Template) statementGrants(s *yaml.Node) ([]Grant, error) {
	if effect := get(s, "Effect"); effect == nil || effect.Value != "Allow" {
		return nil, fmt.Errorf("line %d: only Allow statements are read", s.Line)
	}
	if get(s, "NotAction") != nil || get(s, "NotResource") != nil {
		return nil, fmt.Errorf("line %d: NotAction and NotResource grant more than they name", s.Line)
	}
	var errs []error
	var resources []string
	for _, r := range list(get(s, "Resource")) {
		res, err := render(r)
		if err == nil {
			err = t.checkResource(r)
		}
		errs = append(errs, err)
		resources = append(resources, res)
	}
	var grants []Grant
	for _, a := range list(get(s, "Action")) {
		if strings.ContainsAny(a.Value, "*?") {
			errs = append(errs, fmt.Errorf("line %d: wildcard action %s", a.Line, a.Value))
		}
		for _, r := range resources {
			grants = append(grants, Grant{a.Value, r})
		}
	}
	return grants, errors.Join(errs...)
}

// checkResource refuses a resource that is not one of the stack's own: a
// resource the template defines, or one its deployer names in a
// parameter, or either by a condition (!If).
func (t *Template) checkResource(n *yaml.Node) error {
	if n.Tag == "!If" && n.Kind == yaml.SequenceNode && len(n.Content) == 3 {
		return errors.Join(t.checkResource(n.Content[1]), t.checkResource(n.Content[2]))
	}
	res, err := render(n)
	if err != nil {
		return err
	}
	if !t.ownResource(res) && !t.namedResource(res) {
		return fmt.Errorf("line %d: resource %q is not one of the stack's own", n.Line, res)
	}
	return nil
}

// namedResource reports whether a resource is a parameter ("${KeyArn}")
// whose AllowedPattern refuses a wildcard: the deployer names one
// resource of their own, which the stack does not create.
func (t *Template) namedResource(res string) bool {
	name, ok := strings.CutPrefix(res, "${")
	name, closed := strings.CutSuffix(name, "}")
	p, declared := t.parameters[name]
	if !ok || !closed || !declared {
		return false
	}
	pattern, err := regexp.Compile(scalar(get(p, "AllowedPattern")))
	return err == nil && scalar(get(p, "AllowedPattern")) != "" && !pattern.MatchString("*")
}

// refs matches the ${Name} or ${Name.Attribute} references of a !Sub.
var refs = regexp.MustCompile(`\$\{([A-Za-z0-9]+)[.}]`)

// ownResource reports whether a resource pattern is rooted in a resource
// the template defines, or one a parameter names: "${Table.Arn}/index/*",
// "arn:${AWS::Partition}:appsync:...:apis/${StreamEventsApiId}", not "*"
// nor another account's ARN. A Bedrock foundation model is no stack's, but one a
// template parameter names exactly is the stack's choice.
func (t *Template) ownResource(pattern string) bool {
	if id, ok := strings.CutPrefix(pattern, FoundationModelARN+"${"); ok {
		param, rest, _ := strings.Cut(id, "}")
		_, declared := t.parameters[param]
		return declared && rest == ""
	}
	if !strings.HasPrefix(pattern, "${") && !strings.HasPrefix(pattern, "arn:${AWS::Partition}:") {
		return false
	}
	for _, m := range refs.FindAllStringSubmatch(pattern, -1) {
		if _, ok := t.resources[m[1]]; ok {
			return true
		}
		// An ARN built on a resource its deployer names by a parameter
		// (an Event API's ID), with no wildcard of its own.
		if t.namedResource("${"+m[1]+"}") && !strings.ContainsAny(pattern, "*?") {
			return true
		}
	}
	return false
}

// render writes a resource's ARN expression the way a !Sub would.
func render(n *yaml.Node) (string, error) {
	switch {
	case n == nil:
		return "", errors.New("missing")
	case n.Tag == "!GetAtt" && n.Kind == yaml.ScalarNode:
		return "${" + n.Value + "}", nil
	case n.Tag == "!GetAtt" && n.Kind == yaml.SequenceNode && len(n.Content) == 2:
		return "${" + n.Content[0].Value + "." + n.Content[1].Value + "}", nil
	case n.Tag == "!Ref":
		return "${" + n.Value + "}", nil
	case (n.Tag == "!Sub" || n.Tag == "!!str") && n.Kind == yaml.ScalarNode:
		return n.Value, nil
	case n.Tag == "!If" && n.Kind == yaml.SequenceNode && len(n.Content) == 3:
		// One resource or another by a condition: an expression that
		// covers only the same expression (an environment variable's).
		yes, err1 := render(n.Content[1])
		no, err2 := render(n.Content[2])
		return "!If [" + n.Content[0].Value + ", " + yes + ", " + no + "]", errors.Join(err1, err2)
	}
	return "", fmt.Errorf("line %d: an expression iamcheck cannot read", n.Line)
}

// get returns the value of key in a mapping node, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
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

// list is a node that may be one value or a sequence of them.
func list(n *yaml.Node) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode && n.Tag != "!GetAtt" && n.Tag != "!If":
		return n.Content
	}
	return []*yaml.Node{n}
}

// scalar is a node's value, "" for none.
func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}
