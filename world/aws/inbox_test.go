package aws

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

var answers = workflow.DefineRespondingHook[string, string]()

var answer = workflow.DefineStep("aws-test.answer", func(ctx context.Context, m workflow.HookMessage[string, string]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, "re: "+m.Data)
})

// answering answers n messages on its token, each with a step of its own
// that runs beside the others, then ends.
var answering = workflow.Define("aws-test.answering", func(ctx workflow.Context, in struct {
	Token string
	N     int
}) (int, error) {
	h := answers.Create(ctx, workflow.WithToken(in.Token))
	var answered []workflow.Future[struct{}]
	for range in.N {
		m, err := h.Receive(ctx)
		if err != nil {
			return 0, err
		}
		answered = append(answered, workflow.Go(ctx, func(ctx workflow.Context) (struct{}, error) { return answer.Call(ctx, m) }))
	}
	_, err := workflow.Gather(ctx, answered...)
	return in.N, err
})

// resumeCost is what the resumes of one hook cost: DynamoDB write calls
// (the resumers', the worker's and the replies') per resume, and Queries.
type resumeCost struct {
	writesPerResume, queriesPerResume float64
	took                              time.Duration
}

// measureResumes starts a run answering callers messages, has callers
// resume its hook at once, each waiting for its reply, and counts the
// calls of both sides until the run has ended.
func measureResumes(t *testing.T, worker, caller *World, callers int) resumeCost {
	t.Helper()
	ctx := t.Context()
	c := workflow.NewClient(caller)
	token := fmt.Sprintf("aws-test:answer:%d:%d", callers, time.Now().UnixNano())
	run, err := workflow.Start(ctx, c, answering, struct {
		Token string
		N     int
	}{token, callers})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := c.GetHook(ctx, token); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // let the run's invocation suspend
	worker.ResetCalls()
	caller.ResetCalls()
	began := time.Now()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			msg := fmt.Sprint("caller-", i)
			got, err := answers.Resume(ctx, c, token, msg)
			if err != nil || got != "re: "+msg {
				t.Errorf("caller %d got %q, %v", i, got, err)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	if n, err := run.Result(ctx); err != nil || n != callers {
		t.Fatalf("the run answered %d, %v; want %d", n, err, callers)
	}
	var writes, queries int64
	t.Logf("%d callers: worker %v", callers, worker.Calls())
	t.Logf("%d callers: callers %v", callers, caller.Calls())
	for _, calls := range []map[string]int64{worker.Calls(), caller.Calls()} {
		for op, n := range calls {
			switch {
			case op == "DynamoDB.Query":
				queries += n
			case strings.HasPrefix(op, "DynamoDB.") && isWrite(op):
				writes += n
			}
		}
	}
	return resumeCost{float64(writes) / float64(callers), float64(queries) / float64(callers), took}
}

func isWrite(op string) bool {
	switch strings.TrimPrefix(op, "DynamoDB.") {
	case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem":
		return true
	}
	return false
}

// TestConcurrentResumesOfOneHook: a hundred callers resuming one
// responding hook at once each get their reply, and cost about the
// DynamoDB writes a lone caller costs (each message waits in the run's
// inbox, under a key of its own, and the run folds them into its log in
// batches), not a race for the log's next slot.
func TestConcurrentResumesOfOneHook(t *testing.T) {
	worker := newTestWorld(t)
	caller, err := New(emulatorConfig(t), worker.opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithTimeout(t.Context(), 2*time.Minute)
	defer stop()
	go workflow.NewWorker(worker, workflow.WorkerOptions{Concurrency: 16}).Run(ctx)
	lone := measureResumes(t, worker, caller, 1)
	many := measureResumes(t, worker, caller, 100)
	t.Logf("1 caller: %.1f writes, %.1f queries per resume, %v", lone.writesPerResume, lone.queriesPerResume, lone.took)
	t.Logf("100 callers: %.1f writes, %.1f queries per resume, %v", many.writesPerResume, many.queriesPerResume, many.took)
	if many.writesPerResume > 1.5*lone.writesPerResume {
		t.Errorf("a resume among 100 concurrent ones costs %.1f DynamoDB writes, a lone one %.1f: over 1.5 times", many.writesPerResume, lone.writesPerResume)
	}
}
