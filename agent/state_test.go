package agent_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// greetings counts the real executions of a side effect.
var greetings atomic.Int32

var greet = workflow.DefineStep("agent.test.greet", func(ctx context.Context, name string) (string, error) {
	greetings.Add(1)
	return "hello " + name, nil
})

var nextMessage = workflow.DefineHook[string](nil)

// session keeps per-run state (useWorkflowState) in a variable of the
// workflow function and per-node state (useNodeState) in a variable the
// node's closure owns. Replay rebuilds both from the recorded results,
// whatever invocation picks the run up after a wait.
var session = workflow.Define("agent.test.session", func(ctx workflow.Context, name string) ([]string, error) {
	var transcript []string // per run: every node appends to it
	hook := nextMessage.Create(ctx, workflow.WithToken("session:"+name))
	reply := replyNode()
	for range 3 {
		msg, err := hook.Receive(ctx)
		if err != nil {
			return nil, err
		}
		line, err := reply(ctx, name, msg)
		if err != nil {
			return nil, err
		}
		transcript = append(transcript, line)
	}
	return transcript, nil
})

// replyNode is a node with state of its own: how often it ran, and the
// greeting its first run fetched, which guards the side effect.
func replyNode() func(workflow.Context, string, string) (string, error) {
	var runs int
	var greeting string
	return func(ctx workflow.Context, name, msg string) (string, error) {
		runs++
		if greeting == "" {
			g, err := greet.Call(ctx, name)
			if err != nil {
				return "", err
			}
			greeting = g
		}
		return fmt.Sprintf("%d: %s, you said %s", runs, greeting, msg), nil
	}
}

// TestNodeAndRunStateReplayDeterministically: three resumes, each picked
// up by an invocation that replays the run from its log, see the state as
// it was; the side effect the node state guards ran once; and a replay of
// the whole log against today's code makes the same calls.
func TestNodeAndRunStateReplayDeterministically(t *testing.T) {
	greetings.Store(0)
	env := workflowtest.New(t)
	run := workflowtest.Start(env, session, "ada")
	for _, msg := range []string{"hi", "book", "bye"} {
		env.RunUntilIdle()
		if err := nextMessage.Resume(t.Context(), env.Client, "session:ada", msg); err != nil {
			t.Fatal(err)
		}
	}
	got, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1: hello ada, you said hi", "2: hello ada, you said book", "3: hello ada, you said bye"}
	if fmt.Sprint(got) != fmt.Sprint(want) || greetings.Load() != 1 {
		t.Fatalf("transcript %q, greeted %d times", got, greetings.Load())
	}
	workflowtest.Replay(t, run.Events())
}
