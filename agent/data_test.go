package agent_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

type emailDraft struct {
	Subject string   `json:"subject"`
	Body    string   `json:"body" agent:"stream"`
	Bullets []string `json:"bullets" agent:"stream"`
}

func (d emailDraft) Validate() error {
	if d.Subject == "" {
		return errors.New("a draft needs a subject")
	}
	return nil
}

// compose streams a draft the way an application's node would, checking
// that the stream refuses what does not fit before it writes it.
var compose = agent.NewTool("compose", "Draft an email", func(ctx context.Context, in struct{ To string }, call agent.ToolCallInfo) (emailDraft, error) {
	ds, err := agent.NewDataStream[emailDraft](ctx, agent.DefaultNamespace, "draft-"+call.ID)
	if err != nil {
		return emailDraft{}, err
	}
	draft := emailDraft{Subject: "Your trip", Body: "Dear " + in.To, Bullets: []string{"flight", "hotel"}}
	for _, err := range []error{
		ds.Set("subject", draft.Subject),
		ds.TextDelta("body", "Dear "),
		ds.TextDelta("body", in.To),
		ds.Append("bullets", "flight"),
		ds.Append("bullets", "hotel"),
	} {
		if err != nil {
			return emailDraft{}, err
		}
	}
	if ds.Append("subject", "x") == nil || ds.Set("subject.en", "x") == nil || ds.TextDelta("bullets", "x") == nil || ds.Set("", 1) == nil {
		return emailDraft{}, errors.New("the stream took an update that does not fit what it holds")
	}
	if ds.Final(emailDraft{Body: "no subject"}) == nil {
		return emailDraft{}, errors.New("the stream took a final object its Validate refuses")
	}
	return draft, ds.Final(draft)
})

var composeFlow = workflow.Define("agent.test.compose", func(ctx workflow.Context, to string) (emailDraft, error) {
	return compose.Call(ctx, struct{ To string }{to}, agent.ToolCallInfo{ID: "c1", Name: "compose"})
})

// TestStructuredDataFromCodeArrivesBeforeItsValidatedFinal: a step's
// updates stream in order, the final object after them, and a client's
// reducer builds the same object from the updates as the final one.
func TestStructuredDataFromCodeArrivesBeforeItsValidatedFinal(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, composeFlow, "Ada")
	if _, err := run.Result(); err != nil {
		t.Fatal(err)
	}
	var kinds []agent.DataKind
	parts := readAllParts(t, run.Run)
	for _, p := range parts {
		if p.Type == agent.PartData {
			kinds = append(kinds, p.Data.Kind)
		}
	}
	want := []agent.DataKind{agent.DataSet, agent.DataTextDelta, agent.DataTextDelta, agent.DataAppend, agent.DataAppend, agent.DataFinal}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	built, err := agent.Objects(parts[:len(parts)-1]) // all but the final
	if err != nil {
		t.Fatal(err)
	}
	final, _ := agent.Objects(parts)
	wantObj := map[string]any{"subject": "Your trip", "body": "Dear Ada", "bullets": []any{"flight", "hotel"}}
	if !reflect.DeepEqual(built["draft-c1"], wantObj) || !reflect.DeepEqual(final["draft-c1"], wantObj) {
		t.Fatalf("built %v, final %v", built, final)
	}
}

// readAllParts reads a finished run's stream.
func readAllParts[O any](t *testing.T, run *workflow.Run[O]) []agent.Part {
	t.Helper()
	var parts []agent.Part
	for p, err := range workflow.ReadStream[agent.Part](t.Context(), run, agent.DefaultNamespace, 0) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return parts
}

func TestObjectsRefusesUpdatesThatDoNotFit(t *testing.T) {
	part := func(kind agent.DataKind, path, value string) agent.Part {
		return agent.Part{Type: agent.PartData, Data: &agent.DataUpdate{StreamID: "s", Kind: kind, Path: path, Value: []byte(value)}}
	}
	ok := []agent.Part{part(agent.DataSet, "rows", `[{"a":1}]`), part(agent.DataSet, "rows.0.b", `2`), part(agent.DataAppend, "rows", `[{"a":3}]`)}
	objs, err := agent.Objects(ok)
	if err != nil || !reflect.DeepEqual(objs["s"], map[string]any{"rows": []any{map[string]any{"a": 1.0, "b": 2.0}, map[string]any{"a": 3.0}}}) {
		t.Fatalf("objects %v, %v", objs, err)
	}
	for name, bad := range map[string]agent.Part{
		"index past the end":  part(agent.DataSet, "rows.5.a", `1`),
		"through a number":    part(agent.DataSet, "rows.0.a.x", `1`),
		"append to an object": part(agent.DataAppend, "rows.0", `[1]`),
		"append a non-array":  part(agent.DataAppend, "rows", `1`),
		"text to a number":    part(agent.DataTextDelta, "rows.0.a", `"x"`),
		"empty segment":       part(agent.DataSet, "rows..a", `1`),
		"no path":             part(agent.DataSet, "", `1`),
		"unknown kind":        part("merge", "rows", `1`),
	} {
		if _, err := agent.Objects(append(ok[:3:3], bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// twoCards writes two objects, and fails its first attempt halfway.
var twoCards = agent.NewTool("two_cards", "Show two cards", func(ctx context.Context, in struct{}, call agent.ToolCallInfo) (string, error) {
	info, _ := workflow.GetStepInfo(ctx)
	for _, id := range []string{"left", "right"} {
		ds, err := agent.NewDataStream[emailDraft](ctx, agent.DefaultNamespace, id)
		if err != nil {
			return "", err
		}
		if err := ds.Append("bullets", id+" item"); err != nil {
			return "", err
		}
		if info.Attempt == 1 {
			return "", errors.New("the card service dropped the connection")
		}
		if err := ds.Final(emailDraft{Subject: id, Bullets: []string{id + " item"}}); err != nil {
			return "", err
		}
	}
	return "shown", nil
}, agent.WithStepOptions(workflow.WithBackoff(func(int) time.Duration { return time.Millisecond })))

var twoCardsFlow = workflow.Define("agent.test.two-cards", func(ctx workflow.Context, _ string) (string, error) {
	return twoCards.Call(ctx, struct{}{}, agent.ToolCallInfo{ID: "t1", Name: "two_cards"})
})

// TestRetriedStepsStructuredDataIsReplaced: a step that writes two
// objects and is retried leaves a client with each object once, the
// failed attempt's provisional items dropped.
func TestRetriedStepsStructuredDataIsReplaced(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, twoCardsFlow, "")
	if _, err := run.Result(); err != nil {
		t.Fatal(err)
	}
	objs, err := agent.Objects(readAllParts(t, run.Run))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"left", "right"} {
		obj, _ := objs[id].(map[string]any)
		if got := obj["bullets"]; !reflect.DeepEqual(got, []any{id + " item"}) {
			t.Errorf("%s: bullets %v", id, got)
		}
	}
}
