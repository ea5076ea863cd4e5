package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Target is a speed goal for the embedded World, checked against a
// metric's p75 (the percentile https://useworkflow.dev/docs/performance
// and the peers report) unless Stat says otherwise.
type Target struct {
	Metric string  `json:"metric"`
	Stat   string  `json:"stat"` // "p75", "p50", "ratio" or "p75-hop" (p75 less queue_hop's p75)
	Max    float64 `json:"max"`  // milliseconds, or a ratio
	What   string  `json:"what"`
	// Of is the metric a "ratio" divides by, p75 by p75 (default
	// long_stso_1_20).
	Of string `json:"of,omitempty"`
}

// base is the metric a ratio target divides by.
func (t Target) base() string {
	if t.Of == "" {
		return "long_stso_1_20"
	}
	return t.Of
}

// TargetResult is a target checked against one World's result.
type TargetResult struct {
	Target
	Value float64 `json:"value"`
	Pass  bool    `json:"pass"`
}

// Targets are the goals for the embedded World whose acknowledged
// writes survive a power cut (local-fullsync); the suite evaluates them
// on every World.
var Targets = []Target{
	{Metric: "ttfs", Stat: "p75", Max: 1, What: "TTFS ≤ 1 ms"},
	{Metric: "stso", Stat: "p75", Max: 0.3, What: "STSO ≤ 0.3 ms"},
	{Metric: "long_stso_1001_1020", Stat: "ratio", Max: 1.2, What: "STSO at steps 1,001–1,020 within 1.2× of steps 1–20 (p75)"},
	{Metric: "long_overhead", Stat: "p50", Max: 400, What: "1,020 steps ≤ 0.4 s (median run, in-step time excluded)"},
	{Metric: "fan_last", Stat: "p75", Max: 30, What: "fan-out 64: last branch starts ≤ 30 ms"},
	{Metric: "fan_join", Stat: "p75", Max: 5, What: "fan-out 64: join ≤ 5 ms"},
	{Metric: "ttr", Stat: "p75", Max: 4, What: "TTR ≤ 4 ms"},
	{Metric: "ctt", Stat: "p75", Max: 2, What: "CTT ≤ 2 ms"},
	historyTarget,
}

// historyTarget: a warm resume costs the same after a long history.
var historyTarget = Target{Metric: "history_ttr_10000", Stat: "ratio", Of: "history_ttr_10", Max: 1.5, What: "warm TTR after 10,000 events within 1.5× of after 10 (p75)"}

// TargetWorld is the World the targets are stated for.
const TargetWorld = "local-fullsync"

// InRegionTargets are the goals for the AWS World with in-region
// latencies (the aws-inregion subject): close to the floor its calls set,
// one TransactWriteItems (10 ms at the median) per step.
var InRegionTargets = []Target{
	{Metric: "ttfs", Stat: "p75-hop", Max: 40, What: "TTFS ≤ 40 ms plus the queue hop (p75 less queue_hop's p75)"},
	{Metric: "stso", Stat: "p75", Max: 15, What: "STSO ≤ 15 ms"},
	{Metric: "long_wall", Stat: "p50", Max: 15000, What: "1,020 steps ≤ 15 s (median run, wall time)"},
	{Metric: "fan_join", Stat: "p75", Max: 20, What: "fan-out 64: join ≤ 2 write latencies (TransactWriteItems, 10 ms)"},
	{Metric: "ttr", Stat: "p75-hop", Max: 40, What: "TTR ≤ 40 ms plus the queue hop (p75 less queue_hop's p75)"},
	{Metric: "ctt", Stat: "p75", Max: 30, What: "CTT ≤ 30 ms"},
	// The same spans less the emulator's overrun: what the design costs
	// when each call takes its modelled latency (README, the metrics table).
	{Metric: "ttfs_net", Stat: "p75-hop", Max: 40, What: "TTFS ≤ 40 ms plus the queue hop, less the emulator's overrun"},
	{Metric: "long_wall_net", Stat: "p50", Max: 15000, What: "1,020 steps ≤ 15 s, less the emulator's overrun"},
	{Metric: "fan_join_net", Stat: "p75", Max: 20, What: "fan-out 64: join ≤ 2 write latencies, less the emulator's overrun"},
	{Metric: "ttr_net", Stat: "p75-hop", Max: 40, What: "TTR ≤ 40 ms plus the queue hop, less the emulator's overrun"},
	{Metric: "ctt_net", Stat: "p75", Max: 30, What: "CTT ≤ 30 ms, less the emulator's overrun"},
	historyTarget,
	// The emulator's Query reads a run's whole partition (README, "Resume
	// after a long history"); DynamoDB's does not.
	{Metric: "history_ttr_net_10000", Stat: "ratio", Of: "history_ttr_net_10", Max: 1.5, What: "the same, less the emulator's overrun (p75)"},
}

func evaluate(r *Result, targets []Target) []TargetResult {
	var out []TargetResult
	for _, t := range targets {
		m, ok := r.Metric(t.Metric)
		if !ok {
			continue
		}
		tr := TargetResult{Target: t}
		switch t.Stat {
		case "p75-hop":
			hop, ok := r.Metric("queue_hop")
			if !ok {
				continue
			}
			tr.Value = round3(m.Stats.P75 - hop.Stats.P75)
		case "p50":
			tr.Value = m.Stats.P50
		case "ratio":
			first, ok := r.Metric(t.base())
			if !ok || first.Stats.P75 == 0 {
				continue
			}
			tr.Value = round3(m.Stats.P75 / first.Stats.P75)
		default:
			tr.Value = m.Stats.P75
		}
		tr.Pass = tr.Value <= t.Max
		out = append(out, tr)
	}
	return out
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// Env describes the machine and build a result came from.
type Env struct {
	GoVersion string `json:"go"`
	OS        string `json:"os"`
	CPUs      int    `json:"cpus"`
	CPU       string `json:"cpu,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Dirty     bool   `json:"dirty,omitempty"`
	Load      string `json:"loadAverage,omitempty"` // /proc/loadavg when the World's suite started
	// Fsync is the latency of one 4 KiB write and fsync in the
	// directory the Worlds store their data in: the floor of a durable
	// commit on this machine.
	Fsync *Summary `json:"fsync4kb,omitempty"`
}

func environment() Env {
	e := Env{GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU()}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		e.Commit = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		e.Dirty = len(strings.TrimSpace(string(out))) > 0
	}
	e.CPU = cpuModel()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		e.Load = strings.TrimSpace(string(b))
	}
	if d, err := fsyncLatency(os.TempDir(), 100); err == nil {
		s := Summarize(d)
		e.Fsync = &s
	}
	return e
}

// fsyncLatency times n appends of 4 KiB, each followed by fsync, in a
// scratch file in dir.
func fsyncLatency(dir string, n int) ([]time.Duration, error) {
	f, err := os.CreateTemp(dir, "fsync-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	out := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

func cpuModel() string {
	out, err := exec.Command("sh", "-c", "grep -m1 'model name' /proc/cpuinfo").Output()
	if err != nil {
		return ""
	}
	_, model, _ := strings.Cut(string(out), ":")
	return strings.TrimSpace(model)
}

func (t TargetResult) String() string {
	verdict := "MISS"
	if t.Pass {
		verdict = "pass"
	}
	unit := " ms"
	if t.Stat == "ratio" {
		unit = "×"
	}
	return fmt.Sprintf("%-4s %-62s %s = %g%s", verdict, t.What, t.Stat, t.Value, unit)
}
