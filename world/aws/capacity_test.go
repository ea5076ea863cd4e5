package aws

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaworkflow/workflow/world"
)

// Item sizes follow DynamoDB's rules: names count, numbers take about a
// byte per two significant digits plus one, lists and maps 3 bytes plus
// 1 per element.
func TestItemSizeFollowsDynamoDBRules(t *testing.T) {
	cases := []struct {
		item map[string]types.AttributeValue
		want int
	}{
		{map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "run#1"}}, 2 + 5},
		{map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "12345"}}, 1 + 4},
		{map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "-0.0500"}}, 1 + 2},
		{map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 2 + 1},
		{map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "ab"}, &types.AttributeValueMemberNULL{Value: true}}}}, 1 + 3 + (1 + 2) + (1 + 1)},
		{map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"k": &types.AttributeValueMemberB{Value: []byte("xyz")}}}}, 1 + 3 + 1 + 1 + 3},
	}
	for _, c := range cases {
		if got := itemSize(c.item); got != c.want {
			t.Errorf("itemSize(%v) = %d, want %d", c.item, got, c.want)
		}
	}
	if got := writeUnits(1025); got != 2 {
		t.Errorf("1,025 bytes written cost %v units, want 2", got)
	}
	if got := readUnits(4097, nil); got != 1 {
		t.Errorf("an eventually consistent read of 4,097 bytes costs %v units, want 1", got)
	}
}

// Units counts what an on-demand table bills for the World's calls: an
// append of one small event is one transaction of two items (the event and
// the log head), billed double; a larger event more; a consistent read of
// the run, one unit.
func TestUnitsOfTheWorldsCalls(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	if _, err := w.CreateRun(ctx, testRun("r"), []world.Event{testEvent(world.RunCreated, "")}); err != nil {
		t.Fatal(err)
	}
	measure := func(what string, do func() error) RequestUnits {
		t.Helper()
		w.ResetCalls()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return w.Units()
	}
	small := measure("append a small event", func() error {
		_, err := w.AppendEvents(ctx, "r", 2, []world.Event{testEvent(world.StepCreated, "")}, nil)
		return err
	})
	if small != (RequestUnits{Write: 4}) {
		t.Errorf("a small append cost %+v, want 4 write units", small)
	}
	large := testEvent(world.StepCompleted, "")
	large.Payload = []byte(`"` + strings.Repeat("x", 2500) + `"`)
	big := measure("append a 2.5 KB event", func() error {
		_, err := w.AppendEvents(ctx, "r", 3, []world.Event{large}, nil)
		return err
	})
	if big != (RequestUnits{Write: 2*3 + 2}) {
		t.Errorf("a 2.5 KB append cost %+v, want 8 write units", big)
	}
	read := measure("GetRun", func() error { _, err := w.GetRun(ctx, "r"); return err })
	if read != (RequestUnits{Read: 1}) {
		t.Errorf("GetRun cost %+v, want 1 read unit", read)
	}
	refused := measure("append at a taken slot", func() error {
		_, err := w.AppendEvents(ctx, "r", 3, []world.Event{testEvent(world.StepCreated, "")}, nil)
		if errors.Is(err, world.ErrSlotTaken) {
			return nil
		}
		return fmt.Errorf("want ErrSlotTaken, got %w", err)
	})
	if refused.Write != 4 {
		t.Errorf("a refused append cost %+v, want its 4 write units billed", refused)
	}
}
