package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// Config sizes a suite run. Quick and Full are the two presets.
type Config struct {
	Mode string        `json:"mode"`
	Work time.Duration `json:"workNs"` // simulated work per step

	SeqRuns  int `json:"sequentialRuns"`
	SeqSteps int `json:"sequentialSteps"`

	LongRuns  int `json:"longRuns"`
	LongSteps int `json:"longSteps"`
	// LongWork is the simulated work per step of the long run (quick mode
	// keeps it short so the run fits in seconds).
	LongWork time.Duration `json:"longWorkNs"`

	FanRuns  int `json:"fanOutRuns"`
	Branches int `json:"branches"`

	ResumeRuns int           `json:"resumeRuns"`
	Resumes    int           `json:"resumesPerRun"`
	Idle       time.Duration `json:"idleNs"` // how long a run waits on its hook before the resume

	// CrowdRuns is how many runs of the crowd metric (one caller, then
	// CrowdCallers at once) each World does.
	CrowdRuns int `json:"crowdRuns"`

	StreamRuns    int     `json:"streamRuns"`
	StreamChunks  int     `json:"streamChunks"`
	StreamSeconds float64 `json:"streamRecordingSeconds"`
	StreamScale   float64 `json:"streamTimeScale"` // 1: real time

	// WaitNap is how long the run a waiter waits on sleeps, on a World
	// that counts its calls (0: the waiters are not measured).
	WaitNap time.Duration `json:"waitNapNs,omitempty"`

	MemSuspended int `json:"memorySuspendedRuns"`
	MemBranches  int `json:"memoryInflightBranches"`

	Warmup bool `json:"warmup"`
	// SlowLongRuns and SlowLongSteps cap the long run on Worlds whose
	// steps take milliseconds (the AWS World on its emulator), to keep
	// quick mode quick; 0 leaves it as it is.
	SlowLongRuns  int `json:"slowWorldLongRuns,omitempty"`
	SlowLongSteps int `json:"slowWorldLongSteps,omitempty"`
}

// Quick is the preset `make bench` runs: every metric, a few runs each,
// 10 ms of simulated work per step (1 ms in the long run), the stream ten
// times faster than real time.
func Quick() Config {
	return Config{
		Mode: "quick", Work: 10 * time.Millisecond,
		SeqRuns: 10, SeqSteps: 5,
		LongRuns: 3, LongSteps: 1020, LongWork: time.Millisecond,
		FanRuns: 10, Branches: 64,
		ResumeRuns: 2, Resumes: 5, Idle: time.Second,
		CrowdRuns:  2,
		StreamRuns: 1, StreamChunks: RecordingChunks, StreamSeconds: RecordingSeconds, StreamScale: 0.1,
		WaitNap:      6 * time.Second,
		MemSuspended: 1000, MemBranches: 64,
		Warmup: true, SlowLongRuns: 1, SlowLongSteps: 120,
	}
}

// Full is the methodology of https://useworkflow.dev/docs/performance:
// 100 ms of simulated work per step, its run counts, the stream in real time.
func Full() Config {
	return Config{
		Mode: "full", Work: 100 * time.Millisecond,
		SeqRuns: 10, SeqSteps: 5,
		LongRuns: 5, LongSteps: 1020, LongWork: 100 * time.Millisecond,
		FanRuns: 25, Branches: 64,
		ResumeRuns: 25, Resumes: 5, Idle: time.Second,
		CrowdRuns:  5,
		StreamRuns: 10, StreamChunks: RecordingChunks, StreamSeconds: RecordingSeconds, StreamScale: 1,
		WaitNap:      62 * time.Second, // a whole minute measured
		MemSuspended: 1000, MemBranches: 64,
		Warmup: true,
	}
}

// History is the preset of the history metric alone (every other
// benchmark at zero runs; the AWS World's per-step costs still measured):
// `make bench HISTORY=1`. Its runs take minutes on the AWS World, where
// each resume waits on the emulator's Query of the run's whole partition
// (README, "Resume after a long history").
func History() Config { return Config{Mode: "history"} }

// Smoke is a tiny preset for tests of the harness: every benchmark runs,
// for a fraction of a second, with no warm-up.
func Smoke() Config {
	return Config{
		Mode: "smoke", Work: time.Millisecond,
		SeqRuns: 2, SeqSteps: 5,
		LongRuns: 1, LongSteps: 25, LongWork: 0,
		FanRuns: 2, Branches: 8,
		ResumeRuns: 1, Resumes: 2, Idle: 10 * time.Millisecond,
		CrowdRuns:  1,
		StreamRuns: 1, StreamChunks: 40, StreamSeconds: 0.2, StreamScale: 1,
	}
}

// Metric is one measured quantity, pooled across runs.
type Metric struct {
	Key   string  `json:"key"`
	Label string  `json:"label"`
	Clock string  `json:"clock"` // where its clock starts and stops
	Stats Summary `json:"stats"`
}

// Result is one World's suite run: what cmd/bench writes as JSON.
type Result struct {
	World       string    `json:"world"`
	Description string    `json:"description"`
	Peer        bool      `json:"peer,omitempty"`
	Skipped     string    `json:"skipped,omitempty"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	Config      Config    `json:"config"`
	Env         Env       `json:"env"`
	StreamAPI   string    `json:"streamApi"`

	Metrics []Metric `json:"metrics"`
	// StreamRunsDelayed counts stream runs with a chunk whose trip took
	// over a second.
	StreamRunsDelayed int `json:"streamRunsWithChunkDelayedOver1s"`
	StreamRuns        int `json:"streamRuns"`

	Memory  *Memory        `json:"memory,omitempty"`
	Costs   *Costs         `json:"awsCosts,omitempty"`
	Targets []TargetResult `json:"targets,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
}

// Metric returns the metric with key, if measured.
func (r *Result) Metric(key string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

func (r *Result) add(key, label, clock string, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	r.Metrics = append(r.Metrics, Metric{Key: key, Label: label, Clock: clock, Stats: Summarize(samples)})
}

// suite runs the benchmarks on one subject.
type suite struct {
	ctx   context.Context
	e     Engine
	cfg   Config
	res   *Result
	calls callCounter // nil unless the World counts its API calls
	logf  func(format string, args ...any)
}

// Run runs the suite on one subject and returns its result. A subject that
// cannot be opened is reported as skipped, with the reason.
func Run(ctx context.Context, subj Subject, cfg Config, logf func(string, ...any)) *Result {
	res := &Result{World: subj.Name, Description: subj.Description, Peer: subj.Peer, Started: time.Now(), Config: cfg, Env: environment()}
	defer func() { res.Seconds = time.Since(res.Started).Seconds() }()
	if logf == nil {
		logf = func(string, ...any) {}
	}
	e, release, err := subj.Open(ctx)
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	defer release()
	res.StreamAPI = e.StreamAPI()
	s := &suite{ctx: ctx, e: e, cfg: cfg, res: res, logf: logf}
	if sdk, ok := e.(*sdkEngine); ok {
		s.calls, _ = sdk.w.(callCounter)
		if h, ok := sdk.w.(interface{ QueueHops() []time.Duration }); ok {
			res.add("queue_hop", "Queue hop (a message to a waiting receiver)", "Enqueue called → Receive returned, before the worker starts", h.QueueHops())
		}
	}
	if s.calls != nil && cfg.SlowLongRuns > 0 {
		s.cfg.LongRuns = min(s.cfg.LongRuns, cfg.SlowLongRuns)
	}
	if s.calls != nil && !subj.FullLongRun && cfg.SlowLongSteps > 0 && cfg.SlowLongSteps < s.cfg.LongSteps {
		s.cfg.LongSteps = cfg.SlowLongSteps
		res.Notes = append(res.Notes, fmt.Sprintf("quick mode: the long run has %d steps on this World, not %d (steps 1,001-1,020 are measured in full mode)", cfg.SlowLongSteps, cfg.LongSteps))
	}
	res.Config = s.cfg
	for _, b := range []struct {
		name string
		run  func() error
	}{
		{"warm-up", s.warmup},
		{"aws costs", s.costs},
		{"five-step workflow", s.sequential},
		{"long run", s.long},
		{"fan-out", s.fanout},
		{"resume", s.resume},
		{"crowd", s.crowdResumes},
		{"history", s.historyMetric},
		{"agent stream", s.stream},
		{"waiters", s.waiters},
	} {
		start := time.Now()
		if err := b.run(); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s failed: %v", b.name, err))
			logf("  %s: FAILED: %v", b.name, err)
			continue
		}
		logf("  %s: %.1fs", b.name, time.Since(start).Seconds())
	}
	if res.Costs != nil {
		res.Costs.Dollars = usEast1.price(res.Costs)
	}
	if !subj.Peer {
		targets := subj.Targets
		if targets == nil {
			targets = Targets
		}
		res.Targets = evaluate(res, targets)
	}
	return res
}

func newRunID() string { return "wrun_bench_" + strings.ToLower(rand.Text()[:16]) }

// started is a run the suite started, with the time its start was called.
type started struct {
	id   string
	t0   time.Time
	wait Wait
}

// startRun starts a run with one of the engine's start methods.
func (s *suite) startRun(begin func(ctx context.Context, id string) (Wait, error)) (started, error) {
	st := started{id: newRunID(), t0: time.Now()}
	var err error
	st.wait, err = begin(s.ctx, st.id)
	return st, err
}

// runToEnd starts a run and waits for its result; end is when the wait
// returned.
func (s *suite) runToEnd(begin func(ctx context.Context, id string) (Wait, error), timeout time.Duration) (started, time.Time, error) {
	st, err := s.startRun(begin)
	if err != nil {
		return st, time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	if err := st.wait(ctx); err != nil {
		return st, time.Time{}, fmt.Errorf("run %s: %w", st.id, err)
	}
	return st, time.Now(), nil
}

func (s *suite) seq(steps int, work time.Duration) func(context.Context, string) (Wait, error) {
	return func(ctx context.Context, id string) (Wait, error) { return s.e.Sequential(ctx, id, steps, work) }
}

func (s *suite) fan(branches int, work time.Duration) func(context.Context, string) (Wait, error) {
	return func(ctx context.Context, id string) (Wait, error) { return s.e.FanOut(ctx, id, branches, work) }
}

func (s *suite) mark(id, key string) (time.Time, error) {
	t, ok := Samples.Get(id, key)
	if !ok {
		return t, fmt.Errorf("run %s: no %s sample", id, key)
	}
	return t, nil
}

// warmup runs two short workflows and one fan-out that are not counted.
func (s *suite) warmup() error {
	if !s.cfg.Warmup {
		return nil
	}
	for range 2 {
		st, _, err := s.runToEnd(s.seq(s.cfg.SeqSteps, time.Millisecond), time.Minute)
		if err != nil {
			return err
		}
		Samples.Forget(st.id)
	}
	st, _, err := s.runToEnd(s.fan(s.cfg.Branches, time.Millisecond), time.Minute)
	Samples.Forget(st.id)
	return err
}

// sequential: TTFS and STSO on the five-step workflow.
func (s *suite) sequential() error {
	var ttfs, stso, wall []time.Duration
	clock := s.netClock()
	for range s.cfg.SeqRuns {
		st, end, err := s.runToEnd(s.seq(s.cfg.SeqSteps, s.cfg.Work), time.Minute)
		if err != nil {
			return err
		}
		first, err := s.mark(st.id, startKey(1))
		if err != nil {
			return err
		}
		ttfs = append(ttfs, first.Sub(st.t0))
		clock.span(st.t0, first)
		gaps, err := s.gaps(st.id, 1, s.cfg.SeqSteps)
		if err != nil {
			return err
		}
		stso = append(stso, gaps...)
		wall = append(wall, end.Sub(st.t0))
		Samples.Forget(st.id)
	}
	s.res.add("ttfs", "Time to first step (5-step workflow)", "start called → first line of step 1", ttfs)
	s.res.add("ttfs_net", "Time to first step, less the emulator's overrun", lessEmulator, clock.net())
	s.res.add("stso", "Step-to-step overhead (5-step workflow)", "last line of step i → first line of step i+1", stso)
	s.res.add("seq_wall", "5-step workflow, wall time", "start called → result returned (includes simulated work)", wall)
	return nil
}

// gaps returns the step-to-step gaps between steps from and to (inclusive).
func (s *suite) gaps(id string, from, to int) ([]time.Duration, error) {
	var out []time.Duration
	for i := from; i < to; i++ {
		end, err := s.mark(id, endKey(i))
		if err != nil {
			return nil, err
		}
		next, err := s.mark(id, startKey(i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, next.Sub(end))
	}
	return out, nil
}

// long: STSO at three depths of a 1,020-step run, and its wall time.
func (s *suite) long() error {
	windows := [][2]int{{1, 20}, {101, 120}, {1001, 1020}}
	gaps := make([][]time.Duration, len(windows))
	var wall, overhead []time.Duration
	clock := s.netClock()
	for range s.cfg.LongRuns {
		st, end, err := s.runToEnd(s.seq(s.cfg.LongSteps, s.cfg.LongWork), 30*time.Minute)
		if err != nil {
			return err
		}
		for i, win := range windows {
			if win[1] > s.cfg.LongSteps {
				continue
			}
			g, err := s.gaps(st.id, win[0], win[1])
			if err != nil {
				return err
			}
			gaps[i] = append(gaps[i], g...)
		}
		var inSteps time.Duration
		for i := 1; i <= s.cfg.LongSteps; i++ {
			a, b, err := s.span(st.id, i)
			if err != nil {
				return err
			}
			inSteps += b.Sub(a)
		}
		wall = append(wall, end.Sub(st.t0))
		clock.span(st.t0, end)
		overhead = append(overhead, end.Sub(st.t0)-inSteps)
		Samples.Forget(st.id)
	}
	for i, win := range windows {
		s.res.add(fmt.Sprintf("long_stso_%d_%d", win[0], win[1]), fmt.Sprintf("Step overhead, steps %d to %d (1,020-step run)", win[0], win[1]),
			"last line of step i → first line of step i+1", gaps[i])
	}
	if s.cfg.LongSteps == 1020 {
		s.res.add("long_wall", "1,020-step run, wall time", "start called → result returned (includes simulated work)", wall)
		s.res.add("long_overhead", "1,020-step run, wall time less in-step time", "start → result, minus every step's first line → last line", overhead)
		s.res.add("long_wall_net", "1,020-step run, wall time less the emulator's overrun", lessEmulator, clock.net())
	}
	return nil
}

// span returns when step i of a run ran its first and its last line.
func (s *suite) span(runID string, i int) (start, end time.Time, err error) {
	if start, err = s.mark(runID, startKey(i)); err != nil {
		return start, end, err
	}
	end, err = s.mark(runID, endKey(i))
	return start, end, err
}

// fanout: 64 one-step branches started together.
func (s *suite) fanout() error {
	var first, last, join, wall []time.Duration
	clock := s.netClock()
	for range s.cfg.FanRuns {
		st, end, err := s.runToEnd(s.fan(s.cfg.Branches, s.cfg.Work), 3*time.Minute)
		if err != nil {
			return err
		}
		var minStart, maxStart, maxEnd time.Time
		for i := 1; i <= s.cfg.Branches; i++ {
			a, b, err := s.span(st.id, i)
			if err != nil {
				return err
			}
			if minStart.IsZero() || a.Before(minStart) {
				minStart = a
			}
			if a.After(maxStart) {
				maxStart = a
			}
			if b.After(maxEnd) {
				maxEnd = b
			}
		}
		joined, err := s.mark(st.id, joinKey)
		if err != nil {
			return err
		}
		first = append(first, minStart.Sub(st.t0))
		last = append(last, maxStart.Sub(st.t0))
		join = append(join, joined.Sub(maxEnd))
		clock.span(maxEnd, joined)
		wall = append(wall, end.Sub(st.t0))
		Samples.Forget(st.id)
	}
	s.res.add("fan_first", "Fan-out 64: first branch starts", "start called → first line of the earliest branch", first)
	s.res.add("fan_last", "Fan-out 64: slowest branch starts (TTLS)", "start called → first line of the latest branch", last)
	s.res.add("fan_join", "Fan-out 64: join", "last line of the slowest branch → code after the join", join)
	s.res.add("fan_join_net", "Fan-out 64: join, less the emulator's overrun", lessEmulator, clock.net())
	s.res.add("fan_wall", "Fan-out 64, wall time", "start called → result returned (includes simulated work)", wall)
	return nil
}

// resume: time to resume, five resumes a run after Idle on the wait.
func (s *suite) resume() error {
	var ttr, call []time.Duration
	var cycles []map[string]int64
	var cycleUnits []awsworld.RequestUnits
	clock := s.netClock()
	for range s.cfg.ResumeRuns {
		st, err := s.startRun(func(ctx context.Context, id string) (Wait, error) {
			return s.e.Resumable(ctx, id, s.cfg.Resumes, s.cfg.Work)
		})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Minute)
		for i := 1; i <= s.cfg.Resumes && err == nil; i++ {
			var t ttrSample
			if t, err = s.resumeOnce(ctx, st.id, i); err != nil {
				break
			}
			ttr, call = append(ttr, t.ttr), append(call, t.call)
			clock.span(t.t0, t.t0.Add(t.ttr))
			if t.calls != nil {
				cycles, cycleUnits = append(cycles, t.calls), append(cycleUnits, t.units)
			}
		}
		if err == nil {
			err = st.wait(ctx)
		}
		cancel()
		Samples.Forget(st.id)
		if err != nil {
			return fmt.Errorf("run %s: %w", st.id, err)
		}
	}
	s.res.add("ttr", "Time to resume (after 1 s idle on a hook)", "resume called → first line of the next step", ttr)
	s.res.add("ttr_net", "Time to resume, less the emulator's overrun", lessEmulator, clock.net())
	s.res.add("resume_call", "Resume call latency", "resume called → returned (payload durably recorded)", call)
	if s.res.Costs != nil && len(cycles) > 0 {
		s.res.Costs.PerResume = averageCalls(cycles)
		s.res.Costs.PerResumeUnits = averageUnits(cycleUnits)
	}
	return nil
}

// ttrSample is one resume: its time to resume, how long the resume call
// took, and the API calls and DynamoDB request units of the whole cycle
// on a World that counts them.
type ttrSample struct {
	t0        time.Time // the resume's call
	ttr, call time.Duration
	calls     map[string]int64
	units     awsworld.RequestUnits
}

// resumeOnce waits for run id to wait on its i-th resume, idles, resumes it
// and times the step that follows.
func (s *suite) resumeOnce(ctx context.Context, id string, i int) (ttrSample, error) {
	var out ttrSample
	if err := s.e.AwaitSuspended(ctx, id, i); err != nil {
		return out, err
	}
	time.Sleep(s.cfg.Idle)
	var before map[string]int64
	var beforeUnits awsworld.RequestUnits
	if s.calls != nil {
		before, beforeUnits = s.calls.Calls(), s.calls.Units()
	}
	t0 := time.Now()
	if err := s.e.Resume(ctx, id, i); err != nil {
		return out, err
	}
	returned := time.Now()
	next, err := Samples.Wait(ctx, id, startKey(i))
	if err != nil {
		return out, err
	}
	out.t0, out.ttr, out.call = t0, next.Sub(t0), returned.Sub(t0)
	if s.calls != nil {
		// Let the cycle settle (the step's result written, the next
		// hook claimed, the run suspended) before counting.
		if _, err := Samples.Wait(ctx, id, endKey(i)); err != nil {
			return out, err
		}
		time.Sleep(300 * time.Millisecond)
		out.calls = diffCalls(before, s.calls.Calls())
		out.units = subUnits(s.calls.Units(), beforeUnits)
	}
	return out, nil
}

// stream: one step replays the agent recording to a stream of its run;
// this process reads it as a client would.
func (s *suite) stream() error {
	var trips, delivery []time.Duration
	delayed := 0
	clock := s.netClock()
	for r := range s.cfg.StreamRuns {
		in := StreamInput{Namespace: "agent", Chunks: s.cfg.StreamChunks, Length: s.cfg.StreamSeconds,
			Scale: s.cfg.StreamScale, Seed: uint64(r + 1)}
		ctx, cancel := context.WithTimeout(s.ctx, time.Duration(float64(time.Second)*(in.Length*in.Scale*4+60)))
		id := newRunID()
		chunks, wait, err := s.e.Stream(ctx, id, in)
		if errors.Is(err, ErrNoStream) {
			cancel()
			s.res.Notes = append(s.res.Notes, "chunk trip time not measured: "+err.Error())
			return nil
		}
		if err != nil {
			cancel()
			return err
		}
		runTrips, last, err := readStream(chunks, in.Chunks, clock)
		if err == nil {
			err = wait(ctx)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		trips = append(trips, runTrips...)
		if slices.Max(runTrips) > time.Second {
			delayed++
		}
		first, err := s.mark(id, "agent/start")
		if err != nil {
			return err
		}
		delivery = append(delivery, last.Sub(first))
		Samples.Forget(id)
	}
	s.res.add("ctt", "Chunk trip time (agent stream)", "writer's write call → reader receives the chunk", trips)
	s.res.add("ctt_net", "Chunk trip time, less the emulator's overrun", lessEmulator, clock.net())
	s.res.add("stream_delivery", fmt.Sprintf("Agent stream delivery (%.1f s recording × %.2g)", s.cfg.StreamSeconds, s.cfg.StreamScale),
		"writer's first line → reader receives the last chunk", delivery)
	s.res.StreamRuns, s.res.StreamRunsDelayed = s.cfg.StreamRuns, delayed
	return nil
}

// readStream reads a run's stream to its end and returns each chunk's trip
// time and when the last chunk arrived; clock gets each trip's span.
func readStream(chunks iter.Seq2[Chunk, error], n int, clock *netClock) ([]time.Duration, time.Time, error) {
	trips := make([]time.Duration, 0, n)
	var last time.Time
	for ch, err := range chunks {
		if err != nil {
			return nil, last, err
		}
		last = time.Now()
		trip := time.Duration(sinceBase() - ch.Written)
		trips = append(trips, trip)
		clock.span(last.Add(-trip), last)
	}
	if len(trips) != n {
		return nil, last, fmt.Errorf("stream ended after %d of %d chunks", len(trips), n)
	}
	return trips, last, nil
}

func mapsUnion(a, b map[string]int64) map[string]bool {
	out := map[string]bool{}
	for k := range maps.Keys(a) {
		out[k] = true
	}
	for k := range maps.Keys(b) {
		out[k] = true
	}
	return out
}

func diffCalls(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k := range mapsUnion(before, after) {
		if d := after[k] - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// averageCalls is the mean per cycle of each key's count (or
// milliseconds).
func averageCalls[V int64 | float64](cycles []map[string]V) map[string]float64 {
	out := map[string]float64{}
	for _, c := range cycles {
		for k, v := range c {
			out[k] += float64(v) / float64(len(cycles))
		}
	}
	return out
}
