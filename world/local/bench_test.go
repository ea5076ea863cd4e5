package local_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// BenchmarkAppendEvents measures what one workflow step costs the World:
// one AppendEvents of two small events to a growing log.
func BenchmarkAppendEvents(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []local.Option
	}{
		{"normal", nil},
		{"fullsync", []local.Option{local.WithFullSync()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := open(b, b.TempDir(), bc.opts...)
			ctx := b.Context()
			run := world.Run{ID: "bench", Workflow: "wf", Status: world.StatusRunning, CreatedAt: time.Now()}
			if _, err := w.CreateRun(ctx, run, []world.Event{{Type: world.RunCreated}}); err != nil {
				b.Fatal(err)
			}
			step := []world.Event{
				{Type: world.StepCompleted, CorrelationID: "step-1", Payload: json.RawMessage(`{"result":42}`), CreatedAt: time.Now()},
				{Type: world.StepCreated, CorrelationID: "step-2", Payload: json.RawMessage(`{"name":"charge"}`), CreatedAt: time.Now()},
			}
			slot := int64(2)
			for b.Loop() {
				if _, err := w.AppendEvents(ctx, run.ID, slot, step, nil); err != nil {
					b.Fatal(err)
				}
				slot += int64(len(step))
			}
		})
	}
}
