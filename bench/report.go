package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// MetricOrder is the order of the table's rows.
var MetricOrder = []string{
	"ttfs", "ttfs_net", "stso", "seq_wall",
	"long_stso_1_20", "long_stso_101_120", "long_stso_1001_1020", "long_overhead", "long_wall", "long_wall_net",
	"fan_first", "fan_last", "fan_join", "fan_join_net", "fan_wall",
	"ttr", "ttr_net", "resume_call", "crowd_1", "crowd_100",
	"history_ttr_10", "history_ttr_1000", "history_ttr_10000",
	"history_stso_10", "history_stso_1000", "history_stso_10000",
	"history_ttr_net_10", "history_ttr_net_1000", "history_ttr_net_10000",
	"history_stso_net_10", "history_stso_net_1000", "history_stso_net_10000",
	"ctt", "ctt_net", "stream_delivery", "queue_hop",
}

var shortLabels = map[string]string{
	"ttfs":                   "TTFS (5-step)",
	"ttfs_net":               "TTFS, less emulator",
	"stso":                   "STSO (5-step)",
	"seq_wall":               "5-step run, wall",
	"long_stso_1_20":         "STSO steps 1–20",
	"long_stso_101_120":      "STSO steps 101–120",
	"long_stso_1001_1020":    "STSO steps 1,001–1,020",
	"long_overhead":          "1,020 steps, wall − in-step",
	"long_wall":              "1,020 steps, wall",
	"long_wall_net":          "1,020 steps, wall, less emulator",
	"fan_first":              "Fan-out: first start",
	"fan_last":               "Fan-out: last start (TTLS)",
	"fan_join":               "Fan-out: join",
	"fan_join_net":           "Fan-out: join, less emulator",
	"fan_wall":               "Fan-out run, wall",
	"ttr":                    "TTR (after 1 s idle)",
	"ttr_net":                "TTR, less emulator",
	"resume_call":            "ResumeHook call",
	"crowd_1":                "Responding hook, 1 caller",
	"crowd_100":              "Responding hook, 100 callers",
	"history_ttr_10":         "TTR after 10 events",
	"history_ttr_1000":       "TTR after 1,000 events",
	"history_ttr_10000":      "TTR after 10,000 events",
	"history_stso_10":        "STSO after 10 events",
	"history_stso_1000":      "STSO after 1,000 events",
	"history_stso_10000":     "STSO after 10,000 events",
	"history_ttr_net_10":     "TTR after 10 events, less emulator",
	"history_ttr_net_1000":   "TTR after 1,000 events, less emulator",
	"history_ttr_net_10000":  "TTR after 10,000 events, less emulator",
	"history_stso_net_10":    "STSO after 10 events, less emulator",
	"history_stso_net_1000":  "STSO after 1,000 events, less emulator",
	"history_stso_net_10000": "STSO after 10,000 events, less emulator",
	"ctt":                    "CTT (chunk trip)",
	"ctt_net":                "CTT, less emulator",
	"stream_delivery":        "Stream delivery",
	"queue_hop":              "Queue hop",
}

// WriteJSON writes a result to dir/<world>.<mode>.json and returns the path.
func WriteJSON(dir string, r *Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s.%s.json", r.World, r.Config.Mode))
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadJSON reads back the result WriteJSON wrote for a World and mode.
func ReadJSON(dir, world, mode string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s.%s.json", world, mode)))
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s.%s.json: %w", world, mode, err)
	}
	return &r, nil
}

// WriteTable prints the results side by side: p50 / p75 / p99 in ms per
// World, the peers' p75 and the target.
func WriteTable(out io.Writer, results []*Result) {
	var ran []*Result
	for _, r := range results {
		if r.Skipped != "" {
			fmt.Fprintf(out, "%s: skipped: %s\n", r.World, r.Skipped)
			continue
		}
		ran = append(ran, r)
	}
	if len(ran) == 0 {
		return
	}
	if e := ran[0].Env; true {
		fsync := ""
		if e.Fsync != nil {
			fsync = fmt.Sprintf(", fsync of 4 KiB p50 %s ms / p99 %s ms", num(e.Fsync.P50), num(e.Fsync.P99))
		}
		fmt.Fprintf(out, "%s, %d CPUs, %s, load average %s%s; %s mode, %s of simulated work per step\n\n",
			e.CPU, e.CPUs, e.GoVersion, e.Load, fsync, ran[0].Config.Mode, ran[0].Config.Work)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	header := []string{"metric (ms)"}
	for _, r := range ran {
		header = append(header, r.World+" p50/p75/p99")
	}
	header = append(header, "n", "target")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, key := range MetricOrder {
		row := []string{shortLabels[key]}
		n := ""
		any := false
		for _, r := range ran {
			m, ok := r.Metric(key)
			if !ok {
				row = append(row, "–")
				continue
			}
			any = true
			row = append(row, fmt.Sprintf("%s / %s / %s", num(m.Stats.P50), num(m.Stats.P75), num(m.Stats.P99)))
			n = fmt.Sprint(m.Stats.N)
		}
		if !any {
			continue
		}
		target := ""
		for _, t := range Targets {
			if t.Metric == key {
				target = targetText(t)
			}
		}
		row = append(row, n, target)
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	writeRatios(out, Compare(ran))
	for _, r := range ran {
		if r.StreamRuns > 0 {
			fmt.Fprintf(out, "%s: stream runs with a chunk delayed > 1 s: %d of %d\n", r.World, r.StreamRunsDelayed, r.StreamRuns)
		}
	}
	for _, r := range ran {
		if m := r.Memory; m != nil {
			if s := m.Suspended; s != nil {
				fmt.Fprintf(out, "%s: peak RSS holding %d suspended runs: %.1f MB (baseline %.1f MB, Go heap in use %.1f MB, held %.1f MB, stacks %.1f MB)\n",
					r.World, s.Runs, mb(s.PeakKB), mb(s.BaselineKB), mb(s.HeapInuseKB), mb(s.HeapHeldKB), mb(s.StackKB))
			}
			if s := m.Inflight; s != nil {
				fmt.Fprintf(out, "%s: peak RSS holding %d in-flight branches: %.1f MB (baseline %.1f MB, %d goroutines)\n",
					r.World, s.Branches, mb(s.PeakKB), mb(s.BaselineKB), s.Goroutines)
			}
		}
		if c := r.Costs; c != nil {
			fmt.Fprintf(out, "%s: API calls per inline step: %s (DynamoDB writes %.2g, SQS sends %.2g)\n",
				r.World, formatCalls(c.PerStep), c.DynamoDBWritesPerStep, c.SQSSendsPerStep)
			if c.PerResume != nil {
				fmt.Fprintf(out, "%s: API calls per resume cycle: %s\n", r.World, formatCalls(c.PerResume))
			}
			if cr := c.Crowd; cr != nil {
				fmt.Fprintf(out, "%s: API calls per resume of a responding hook, 1 caller: %s\n", r.World, formatCalls(cr.Lone))
				fmt.Fprintf(out, "%s: API calls per resume of a responding hook, %d callers at once: %s (DynamoDB writes %.2g× a lone caller's)\n",
					r.World, CrowdCallers, formatCalls(cr.Many), cr.WritesRatio)
			}
			for _, h := range c.History {
				fmt.Fprintf(out, "%s: resume cycle after %d events (warm): %s, DynamoDB read units %.1f\n", r.World, h.Events, formatCalls(h.Calls), h.Units.Read)
			}
			if c.WaitingPerMinute != nil {
				fmt.Fprintf(out, "%s: requests per waiting minute of one caller, after its first second: %s\n", r.World, formatCalls(c.WaitingPerMinute))
			}
			writeDollars(out, r.World, c)
		}
	}
	for _, r := range ran {
		for _, n := range r.Notes {
			fmt.Fprintf(out, "%s: note: %s\n", r.World, n)
		}
	}
	for _, r := range ran {
		if len(r.Targets) == 0 {
			continue
		}
		suffix := ""
		if r.World == TargetWorld {
			suffix = " (the World the targets are set for)"
		}
		fmt.Fprintf(out, "targets on %s%s:\n", r.World, suffix)
		for _, t := range r.Targets {
			fmt.Fprintf(out, "  %s\n", t)
		}
	}
}

func targetText(t Target) string {
	if t.Stat == "ratio" {
		return fmt.Sprintf("≤ %g× %s", t.Max, shortLabels[t.base()])
	}
	return fmt.Sprintf("%s ≤ %g", t.Stat, t.Max)
}

func formatCalls(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.3g", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// num formats milliseconds with three significant digits.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
