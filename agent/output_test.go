package agent_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

var drafter = agent.NewOutput[emailDraft]("test.drafter", scripted, agent.WithSystem("Draft the email."))

var draftFlow = workflow.Define("agent.test.draft", func(ctx workflow.Context, prompt string) (*agent.OutputResult[emailDraft], error) {
	return drafter.Generate(ctx, []agent.Message{agent.UserMessage(prompt)})
})

// chunked is an answer streaming text n bytes at a time.
func chunked(text string, n int) []agent.Delta {
	var ds []agent.Delta
	for i := 0; i < len(text); i += n {
		ds = append(ds, agent.Delta{Text: text[i:min(i+n, len(text))]})
	}
	u := agenttest.Usage
	return append(ds, agent.Delta{Usage: &u, FinishReason: agent.FinishStop})
}

// TestStreamedOutputFieldsArriveBeforeTheValidatedFinal: the streaming
// fields of the model's JSON (the body as text deltas, the bullets as
// items) reach the stream while the model writes them, the untagged
// subject only with the final object, which is the validated value the
// call returns; the model is billed once.
func TestStreamedOutputFieldsArriveBeforeTheValidatedFinal(t *testing.T) {
	answer := "```json\n" + `{"subject": "Trip", "body": "Dear Ada, your flight \"UA1\" leaves at 7.", "bullets": ["seat 3A", "bag \u00e9"]}` + "\n```"
	model := script(chunked(answer, 4))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, draftFlow, "write to Ada")
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := emailDraft{Subject: "Trip", Body: `Dear Ada, your flight "UA1" leaves at 7.`, Bullets: []string{"seat 3A", "bag é"}}
	if !reflect.DeepEqual(res.Value, want) || model.Calls() != 1 {
		t.Fatalf("value %+v after %d calls", res.Value, model.Calls())
	}
	parts := readAllParts(t, run.Run)
	final := -1
	counts := map[agent.DataKind]int{}
	for i, p := range parts {
		if p.Type == agent.PartData {
			counts[p.Data.Kind]++
			if p.Data.Kind == agent.DataFinal {
				final = i
			}
		}
		if p.Type == agent.PartTextDelta {
			t.Errorf("the answer's text streamed as text: %q", p.Text)
		}
	}
	if final < 0 || counts[agent.DataTextDelta] < 5 || counts[agent.DataAppend] != 2 || counts[agent.DataSet] != 0 {
		t.Fatalf("updates %v, final at %d", counts, final)
	}
	before, err := agent.Objects(parts[:final])
	if err != nil {
		t.Fatal(err)
	}
	if got := before[res.StreamID]; !reflect.DeepEqual(got, map[string]any{"body": want.Body, "bullets": []any{"seat 3A", "bag é"}}) {
		t.Fatalf("before the final object the client had %v", got)
	}
	after, _ := agent.Objects(parts)
	var wantObj map[string]any
	b, _ := json.Marshal(want)
	_ = json.Unmarshal(b, &wantObj)
	if !reflect.DeepEqual(after[res.StreamID], wantObj) {
		t.Fatalf("final %v", after[res.StreamID])
	}
}

// TestInvalidStreamedOutputWritesNoFinal: an answer its type's Validate
// refuses ends the call with ErrInvalidOutput and an error part, and no
// final object reaches the stream.
func TestInvalidStreamedOutputWritesNoFinal(t *testing.T) {
	script(chunked(`{"body": "no subject", "bullets": []}`, 5))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, draftFlow, "write")
	if _, err := run.Result(); !errors.Is(err, agent.ErrInvalidOutput) {
		t.Fatalf("result error %v, want ErrInvalidOutput", err)
	}
	parts := readAllParts(t, run.Run)
	for _, p := range parts {
		if p.Type == agent.PartData && p.Data.Kind == agent.DataFinal {
			t.Fatalf("an invalid object was written: %s", p.Data.Value)
		}
	}
	if last := parts[len(parts)-1]; last.Type != agent.PartError || last.Handled {
		t.Fatalf("the stream ends with %+v", last)
	}
}

type itinerary struct {
	Title string `json:"title" agent:"stream"`
	Meta  struct {
		Days  int    `json:"days" agent:"stream"`
		Note  string `json:"note"`
		Price struct {
			Amount float64 `json:"amount" agent:"stream"`
		} `json:"price"`
	} `json:"meta"`
	Stops []struct {
		City string `json:"city"`
	} `json:"stops" agent:"stream"`
}

// TestStreamedOutputSurvivesAnyChunking: however the model's text is cut
// (one byte at a time through escapes and multi-byte characters, or in
// bigger pieces), the client builds the same streaming fields.
func TestStreamedOutputSurvivesAnyChunking(t *testing.T) {
	text := `{"title": "Caf\u00e9 tour: Zürich \ud83d\ude00 \\ \"go\"", "meta": {"days": 12, "note": "x", "price": {"amount": 1.5e3}}, "stops": [{"city": "Bern"}, {"city": "Genève"}]}`
	var whole map[string]any
	if err := json.Unmarshal([]byte(text), &whole); err != nil {
		t.Fatal(err)
	}
	meta := whole["meta"].(map[string]any)
	want := map[string]any{"title": whole["title"], "meta": map[string]any{"days": meta["days"], "price": meta["price"]}, "stops": whole["stops"]}
	for _, n := range []int{1, 2, 3, 7, len(text)} {
		got, err := agent.StreamedFields[itinerary](chunkText(text, n))
		if err != nil {
			t.Fatalf("chunks of %d: %v", n, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunks of %d: built %v, want %v", n, got, want)
		}
	}
}

func chunkText(text string, n int) []string {
	var out []string
	for i := 0; i < len(text); i += n {
		out = append(out, text[i:min(i+n, len(text))])
	}
	return out
}

// assessment has streamed fields under "*" segments: each point's label
// (points.*.label, an array's items) and each reviewer's comment
// (reviews.*.comment, a map's model-chosen keys).
type assessment struct {
	Points []struct {
		Label string `json:"label" agent:"stream"`
		Score int    `json:"score" agent:"stream"`
		Notes string `json:"notes"`
	} `json:"points"`
	Reviews map[string]struct {
		Comment string `json:"comment" agent:"stream"`
	} `json:"reviews"`
}

// TestStarPathsStreamEachIndexAndKey: a "*" in a streamed field's path
// matches every index of an array and every key of a map the model
// writes: the client sees each point's label grow (its item announced
// first, so the index exists) and each reviewer's comment, whatever the
// chunking, while the fields that do not stream wait for the final
// object.
func TestStarPathsStreamEachIndexAndKey(t *testing.T) {
	text := `{"points": [{"label": "clear aims", "score": 4, "notes": "n1"}, {"label": "sources", "score": 2, "notes": "n2"}], "reviews": {"zoe": {"comment": "fine"}, "ada": {"comment": "more please"}}}`
	want := map[string]any{
		"points":  []any{map[string]any{"label": "clear aims", "score": 4.0}, map[string]any{"label": "sources", "score": 2.0}},
		"reviews": map[string]any{"zoe": map[string]any{"comment": "fine"}, "ada": map[string]any{"comment": "more please"}},
	}
	for _, n := range []int{1, 3, 8, len(text)} {
		got, err := agent.StreamedFields[assessment](chunkText(text, n))
		if err != nil {
			t.Fatalf("chunks of %d: %v", n, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunks of %d: built %v, want %v", n, got, want)
		}
	}
	// Halfway through the second label, the first point is complete and
	// the second has what has arrived of its label.
	half := text[:strings.Index(text, `"sources"`)+4]
	got, err := agent.StreamedFields[assessment](chunkText(half, 5))
	if err != nil {
		t.Fatal(err)
	}
	points := got.(map[string]any)["points"].([]any)
	if len(points) != 2 || points[1].(map[string]any)["label"] != "sou" {
		t.Fatalf("halfway the client has %v", got)
	}
}
