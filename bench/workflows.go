package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// Payload is what every benchmark step takes and returns: about 1 KB of
// JSON, as in the workload of https://useworkflow.dev/docs/performance.
type Payload struct {
	Index int    `json:"index"`
	Work  int64  `json:"workNs"` // simulated work, excluded from the overheads
	Pad   string `json:"pad"`
}

// payloadBytes is the JSON size Payload is padded to.
const payloadBytes = 1024

var pad = strings.Repeat("x", payloadBytes-len(`{"index":1000,"workNs":100000000,"pad":""}`))

// NewPayload is the input of step i, which works for work.
func NewPayload(i int, work time.Duration) Payload {
	return Payload{Index: i, Work: int64(work), Pad: pad}
}

// work is the benchmark step on this SDK.
var work = workflow.DefineStep("bench.work", func(ctx context.Context, in Payload) (Payload, error) {
	info, _ := workflow.GetStepInfo(ctx)
	return RunStep(info.RunID, in), nil
})

// SeqInput configures the sequential workflow.
type SeqInput struct {
	Steps int           `json:"steps"`
	Work  time.Duration `json:"work"`
}

// sequential runs Steps steps one after the other: the five-step workflow
// and the 1,020-step long run.
var sequential = workflow.Define("bench.sequential", func(ctx workflow.Context, in SeqInput) (int, error) {
	sum := 0
	for i := 1; i <= in.Steps; i++ {
		out, err := work.Call(ctx, NewPayload(i, in.Work))
		if err != nil {
			return 0, err
		}
		sum += out.Index
	}
	return sum, nil
})

// FanInput configures the fan-out workflow.
type FanInput struct {
	Branches int           `json:"branches"`
	Work     time.Duration `json:"work"`
}

// fanout starts Branches one-step branches together and joins them. The
// code after the join records its time only when it runs live: on a
// replay it ran before.
var fanout = workflow.Define("bench.fanout", func(ctx workflow.Context, in FanInput) (int, error) {
	futures := make([]workflow.Future[Payload], in.Branches)
	for i := range futures {
		futures[i] = work.Go(ctx, NewPayload(i+1, in.Work))
	}
	outs, err := workflow.Gather(ctx, futures...)
	if err != nil {
		return 0, err
	}
	if !workflow.IsReplaying(ctx) {
		MarkJoin(ctx.RunID())
	}
	return len(outs), nil
})

// ResumeInput configures the resume workflow.
type ResumeInput struct {
	Resumes int           `json:"resumes"`
	Work    time.Duration `json:"work"`
}

// hookToken is the token of a resume run's i-th hook (1-based).
func hookToken(runID string, i int) string { return fmt.Sprintf("%s/hook/%d", runID, i) }

// resume waits on a hook, then runs a step, Resumes times: time to resume
// is from ResumeHook to that step's first line. With Resumes = 1 and no
// resume it is also the suspended run of the memory benchmark.
var resume = workflow.Define("bench.resume", func(ctx workflow.Context, in ResumeInput) (int, error) {
	for i := 1; i <= in.Resumes; i++ {
		h := workflow.CreateHook[Payload](ctx, workflow.WithToken(hookToken(ctx.RunID(), i)))
		if _, err := h.Receive(ctx); err != nil {
			return 0, err
		}
		if _, err := work.Call(ctx, NewPayload(i, in.Work)); err != nil {
			return 0, err
		}
	}
	return in.Resumes, nil
})

// StreamInput configures the agent-stream workflow.
type StreamInput struct {
	Namespace string  `json:"namespace"` // the run's namespaced stream
	Chunks    int     `json:"chunks"`
	Length    float64 `json:"lengthSeconds"` // of the recording, before scaling
	Scale     float64 `json:"scale"`         // 1: real time; 0.1: ten times faster
	Seed      uint64  `json:"seed"`
}

// agent replays the agent recording to a namespaced stream of its run
// through the user-facing stream API (workflow.Writer), one Write per
// chunk.
var agent = workflow.DefineStep("bench.agent", func(ctx context.Context, in StreamInput) (int, error) {
	info, _ := workflow.GetStepInfo(ctx)
	wr, err := workflow.Writer[Chunk](ctx, in.Namespace)
	if err != nil {
		return 0, err
	}
	n, err := ReplayRecording(info.RunID, in, wr.Write)
	if err != nil {
		return n, err
	}
	return n, wr.Close()
}, workflow.WithMaxRetries(0))

var agentRun = workflow.Define("bench.stream", func(ctx workflow.Context, in StreamInput) (int, error) {
	return agent.Call(ctx, in)
})
