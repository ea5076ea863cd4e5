package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// HistoryLengths are the log lengths, in events, after which the history
// metric resumes a run: a resume on a warm worker should cost the same
// after each (docs/architecture/replay.md, "The warm cache").
var HistoryLengths = []int{10, 1_000, 10_000}

// historyResumes is how many resumes the history metric times per length.
const historyResumes = 5

// HistoryInput configures the history workflow.
type HistoryInput struct {
	Steps   int `json:"steps"`   // steps before the first resume
	Resumes int `json:"resumes"` // each followed by two steps
}

// historyIndex numbers the steps after resume r (1-based): 2r-1 is the
// one TTR stops at, 2r the one STSO measures the gap to.
func historyIndex(r, k int) int { return 2*r - 1 + k }

// history runs Steps steps of 1 KB each (three events apiece), then,
// Resumes times, waits on a hook and runs two steps.
var history = workflow.Define("bench.history", func(ctx workflow.Context, in HistoryInput) (int, error) {
	for i := range in.Steps {
		if _, err := work.Call(ctx, NewPayload(-1-i, 0)); err != nil {
			return 0, err
		}
	}
	for r := 1; r <= in.Resumes; r++ {
		h := workflow.CreateHook[Payload](ctx, workflow.WithToken(hookToken(ctx.RunID(), r)))
		if _, err := h.Receive(ctx); err != nil {
			return 0, err
		}
		for k := range 2 {
			if _, err := work.Call(ctx, NewPayload(historyIndex(r, k), 0)); err != nil {
				return 0, err
			}
		}
	}
	return in.Resumes, nil
})

// HistoryCost is what one resume cost after a history, on a World that
// counts its calls: the whole cycle (the resume call, the invocation it
// wakes, its two steps, the next hook and the suspension).
type HistoryCost struct {
	Events int                   `json:"events"`
	Calls  map[string]float64    `json:"calls"`
	Units  awsworld.RequestUnits `json:"units"`
	// EmulatorMs is the time the emulator took to answer the cycle's
	// calls, per operation, in milliseconds (behind the latency proxy
	// only; the worker's idle long poll left out).
	EmulatorMs map[string]float64 `json:"emulatorMs,omitempty"`
}

// historySamples are what historyOnce measures after one history length.
type historySamples struct {
	ttr, stso []time.Duration
	// ttrNet and stsoNet are ttr and stso less the emulator's overrun in
	// each (behind the latency proxy only).
	ttrNet, stsoNet []time.Duration
	cost            *HistoryCost
}

// historyResumes: time to resume and the step-to-step gap after it, on a
// warm worker, after each of HistoryLengths events. This SDK's Worlds only.
func (s *suite) historyMetric() error {
	sdk, ok := s.e.(*sdkEngine)
	if !ok {
		return nil
	}
	var costs []HistoryCost
	for _, events := range HistoryLengths {
		m, err := s.historyOnce(sdk, events)
		if err != nil {
			return err
		}
		s.res.add(fmt.Sprintf("history_ttr_%d", events), fmt.Sprintf("Time to resume after %d events (warm)", events), "resume called → first line of the next step", m.ttr)
		s.res.add(fmt.Sprintf("history_stso_%d", events), fmt.Sprintf("STSO after %d events", events), "last line of the step after the resume → first line of the next", m.stso)
		s.res.add(fmt.Sprintf("history_ttr_net_%d", events), fmt.Sprintf("Time to resume after %d events (warm), less the emulator's overrun", events), "as history_ttr, less the time in it some call ran past its modelled latency because the emulator had not answered", m.ttrNet)
		s.res.add(fmt.Sprintf("history_stso_net_%d", events), fmt.Sprintf("STSO after %d events, less the emulator's overrun", events), "as history_stso, less the time in it some call ran past its modelled latency because the emulator had not answered", m.stsoNet)
		if m.cost != nil {
			costs = append(costs, *m.cost)
		}
	}
	if s.res.Costs != nil {
		s.res.Costs.History = costs
	}
	return nil
}

// historyOnce builds a run's log to about events events, then resumes it
// historyResumes times.
func (s *suite) historyOnce(sdk *sdkEngine, events int) (historySamples, error) {
	var m historySamples
	ctx, cancel := context.WithTimeout(s.ctx, 15*time.Minute)
	defer cancel()
	id := newRunID()
	defer Samples.Forget(id)
	// run_created, run_started and the hook's creation, then 3 per step.
	in := HistoryInput{Steps: max(events-3, 0) / 3, Resumes: historyResumes}
	_, wait, err := start(ctx, sdk, history, id, in)
	if err != nil {
		return m, err
	}
	timer, _ := sdk.w.(callTimer)
	var cycles []map[string]int64
	var units []awsworld.RequestUnits
	var emulator []map[string]float64
	for r := 1; r <= historyResumes; r++ {
		if err := awaitHook(ctx, sdk.w, hookToken(id, r)); err != nil {
			return m, err
		}
		time.Sleep(300 * time.Millisecond) // the run suspends on its hook
		var before map[string]int64
		var beforeUnits awsworld.RequestUnits
		if s.calls != nil {
			before, beforeUnits = s.calls.Calls(), s.calls.Units()
		}
		var stopTiming func() []faultproxy.Timed
		if timer != nil {
			stopTiming = timer.TimeCalls()
		}
		t0 := time.Now()
		if err := workflow.ResumeHook(ctx, sdk.c, hookToken(id, r), NewPayload(r, 0)); err != nil {
			return m, err
		}
		first, err := Samples.Wait(ctx, id, startKey(historyIndex(r, 0)))
		if err != nil {
			return m, err
		}
		firstEnd, err := Samples.Wait(ctx, id, endKey(historyIndex(r, 0)))
		if err != nil {
			return m, err
		}
		second, err := Samples.Wait(ctx, id, startKey(historyIndex(r, 1)))
		if err != nil {
			return m, err
		}
		m.ttr, m.stso = append(m.ttr, first.Sub(t0)), append(m.stso, second.Sub(firstEnd))
		if s.calls != nil {
			if r < historyResumes {
				if err := awaitHook(ctx, sdk.w, hookToken(id, r+1)); err != nil {
					return m, err
				}
			}
			time.Sleep(300 * time.Millisecond) // the cycle settles: the run suspended
			cycles = append(cycles, diffCalls(before, s.calls.Calls()))
			units = append(units, subUnits(s.calls.Units(), beforeUnits))
		}
		if stopTiming != nil {
			calls := stopTiming()
			m.ttrNet = append(m.ttrNet, first.Sub(t0)-emulatorOverrun(calls, t0, first))
			m.stsoNet = append(m.stsoNet, second.Sub(firstEnd)-emulatorOverrun(calls, firstEnd, second))
			emulator = append(emulator, emulatorMs(calls))
		}
	}
	if err := wait(ctx); err != nil {
		return m, fmt.Errorf("run %s: %w", id, err)
	}
	if len(cycles) > 0 {
		m.cost = &HistoryCost{Events: events, Calls: averageCalls(cycles), Units: averageUnits(units)}
		if len(emulator) > 0 {
			m.cost.EmulatorMs = averageCalls(emulator)
		}
	}
	return m, nil
}
