package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// CrowdCallers is how many callers resume one responding hook at once in
// the crowd metric; it is compared with a lone caller.
const CrowdCallers = 100

var crowdHook = workflow.DefineRespondingHook[Payload, int]()

var crowdAnswer = workflow.DefineStep("bench.crowd-answer", func(ctx context.Context, m workflow.HookMessage[Payload, int]) (struct{}, error) {
	return struct{}{}, m.Respond(ctx, m.Data.Index)
})

// CrowdInput configures the crowd workflow.
type CrowdInput struct {
	Token   string `json:"token"`
	Callers int    `json:"callers"`
}

// crowd answers Callers messages on one responding hook, each with a step
// of its own that runs beside the others, then ends.
var crowd = workflow.Define("bench.crowd", func(ctx workflow.Context, in CrowdInput) (int, error) {
	h := crowdHook.Create(ctx, workflow.WithToken(in.Token))
	answered := make([]workflow.Future[struct{}], in.Callers)
	for i := range answered {
		m, err := h.Receive(ctx)
		if err != nil {
			return 0, err
		}
		answered[i] = workflow.Go(ctx, func(ctx workflow.Context) (struct{}, error) { return crowdAnswer.Call(ctx, m) })
	}
	_, err := workflow.Gather(ctx, answered...)
	return in.Callers, err
})

// CrowdCosts is what one resume of a crowd costs on a World that counts
// its calls, for a lone caller and for CrowdCallers at once: every call of
// the cycle (the resumes, their replies, the run's invocations) over the
// number of resumes.
type CrowdCosts struct {
	Lone map[string]float64 `json:"lone"`
	Many map[string]float64 `json:"many"`
	// WritesRatio is DynamoDB writes per resume among CrowdCallers callers
	// over those of a lone caller (the goal: ≤ 1.5).
	WritesRatio float64 `json:"writesRatio"`
}

// crowdResumes: one caller, then CrowdCallers callers at once, resume a
// responding hook and wait for their replies: from the first call to the
// last reply. Peers have no responding hook; only this SDK's Worlds run it.
func (s *suite) crowdResumes() error {
	sdk, ok := s.e.(*sdkEngine)
	if !ok {
		return nil
	}
	costs := &CrowdCosts{}
	for _, callers := range []int{1, CrowdCallers} {
		var took []time.Duration
		var cycles []map[string]int64
		for range s.cfg.CrowdRuns {
			d, calls, err := s.crowdOnce(sdk, callers)
			if err != nil {
				return err
			}
			took = append(took, d)
			if calls != nil {
				cycles = append(cycles, calls)
			}
		}
		key, label := "crowd_1", "Responding hook, one caller"
		if callers > 1 {
			key, label = fmt.Sprintf("crowd_%d", callers), fmt.Sprintf("Responding hook, %d concurrent callers", callers)
		}
		s.res.add(key, label, "first resume called → last reply returned", took)
		if len(cycles) > 0 {
			per := averageCalls(cycles)
			for k := range per {
				per[k] /= float64(callers)
			}
			if callers == 1 {
				costs.Lone = per
			} else {
				costs.Many = per
			}
		}
	}
	if s.res.Costs != nil && costs.Lone != nil {
		if lone := sumWrites(costs.Lone); lone > 0 {
			costs.WritesRatio = round3(sumWrites(costs.Many) / lone)
		}
		s.res.Costs.Crowd = costs
	}
	return nil
}

func sumWrites(calls map[string]float64) float64 {
	n := 0.0
	for _, k := range ddbWrites {
		n += calls[k]
	}
	return n
}

// crowdOnce starts a crowd run for callers, resumes its hook from callers
// goroutines at once and returns how long until every reply came, and the
// calls of the whole cycle on a World that counts them.
func (s *suite) crowdOnce(sdk *sdkEngine, callers int) (time.Duration, map[string]int64, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Minute)
	defer cancel()
	id := newRunID()
	token := id + "/crowd"
	_, wait, err := start(ctx, sdk, crowd, id, CrowdInput{Token: token, Callers: callers})
	if err != nil {
		return 0, nil, err
	}
	if err := awaitHook(ctx, sdk.w, token); err != nil {
		return 0, nil, err
	}
	time.Sleep(300 * time.Millisecond) // the run suspends on its hook
	var before map[string]int64
	if s.calls != nil {
		before = s.calls.Calls()
	}
	t0 := time.Now()
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			got, err := crowdHook.Resume(ctx, sdk.c, token, NewPayload(i, 0))
			if err == nil && got != i {
				err = fmt.Errorf("caller %d got the reply for %d", i, got)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	took := time.Since(t0)
	for _, err := range errs {
		if err != nil {
			return 0, nil, fmt.Errorf("run %s: %w", id, err)
		}
	}
	if err := wait(ctx); err != nil {
		return 0, nil, fmt.Errorf("run %s: %w", id, err)
	}
	if s.calls == nil {
		return took, nil, nil
	}
	time.Sleep(300 * time.Millisecond) // let the worker ack and the run's end settle
	return took, diffCalls(before, s.calls.Calls()), nil
}
