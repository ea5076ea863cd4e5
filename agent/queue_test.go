package agent_test

import (
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

var followUps = workflow.DefineHook[string](nil)

// queueing listens for follow-ups on a hook beside the Run and injects
// those that arrived before each model call.
var queueing = workflow.Define("agent.test.queueing", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
	var queue []agent.Message
	hook := followUps.Create(ctx, workflow.WithToken("follow-ups:"+ctx.RunID()))
	workflow.Go(ctx, func(ctx workflow.Context) (struct{}, error) {
		for msg, err := range hook.All(ctx) {
			if err == nil {
				queue = append(queue, agent.UserMessage(msg))
			}
		}
		return struct{}{}, nil
	})
	return assistant.Run(ctx, []agent.Message{agent.UserMessage(prompt)}, agent.PrepareEachStep(
		func(ctx workflow.Context, step int, messages []agent.Message) []agent.Message {
			messages, queue = append(messages, queue...), nil
			return messages
		}))
})

// TestMessagesQueuedMidTurnReachTheNextModelCall: a message sent while a
// tool works (a 2-hour pause) is in the next model call's request, after
// the tool's result, and in the Run's conversation; the stream still
// shows the tool's result.
func TestMessagesQueuedMidTurnReachTheNextModelCall(t *testing.T) {
	model := script(agenttest.Answer("", agenttest.Call("p1", "pause", map[string]int{"Hours": 2})), agenttest.Answer("Noted: window seat."))
	env := workflowtest.New(t)
	run := workflowtest.Start(env, queueing, "book a flight")
	env.RunUntilIdle()
	if err := followUps.Resume(t.Context(), env.Client, "follow-ups:"+run.ID, "a window seat, please"); err != nil {
		t.Fatal(err)
	}
	env.Advance(3 * time.Hour)
	res, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	second := model.Requests()[1].Messages
	if last := second[len(second)-1]; last.Role != agent.RoleUser || last.Text != "a window seat, please" || second[len(second)-2].Role != agent.RoleTool {
		t.Fatalf("the second model call got %+v", second)
	}
	if len(res.Messages) != 5 || res.Text != "Noted: window seat." {
		t.Fatalf("conversation %+v", res.Messages)
	}
	if n := countParts(readParts(t, run.Run, 0), agent.PartToolResult); n != 1 {
		t.Fatalf("the stream shows %d tool results", n)
	}
}
