package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// compared are the metrics on which each World is compared with each peer,
// with the statistic compared: a metric's p75, the median run of the
// 1,020-step run, and the peak resident memory of the memory children. The
// long run is compared on its overhead, not its wall time, which also
// counts 1,020 sleeps of 1 ms inside the steps that a loaded machine
// stretches for whichever subject runs then.
var compared = []struct{ key, stat string }{
	{"ttfs", "p75"}, {"stso", "p75"},
	{"long_stso_1001_1020", "p75"}, {"long_overhead", "p50"},
	{"fan_first", "p75"}, {"fan_last", "p75"}, {"fan_join", "p75"},
	{"ttr", "p75"}, {"ctt", "p75"},
	{"mem_suspended", "peak RSS"}, {"mem_inflight", "peak RSS"},
}

// ratioTargets are the goals for a World against the peers: at most
// Max × the peer's value on every compared metric. The default embedded
// World is to be ahead of every peer; the full-sync one, which fsyncs
// before it acknowledges a write, within 1.5× of DBOS, which does not.
var ratioTargets = []struct {
	world, peer string // peer "" is every peer
	max         float64
}{
	{"local", "", 1.0},
	{"local-fullsync", "dbos", 1.5},
}

// Ratio is one World's value over one peer's on one metric, measured in
// the same run.
type Ratio struct {
	Metric string  `json:"metric"`
	Stat   string  `json:"stat"`
	World  string  `json:"world"`
	Peer   string  `json:"peer"`
	Ours   float64 `json:"ours"`
	Theirs float64 `json:"theirs"`
	Ratio  float64 `json:"ratio"`
	Max    float64 `json:"max,omitempty"` // the target, if there is one
}

// Pass reports whether the ratio meets its target (true without one).
func (r Ratio) Pass() bool { return r.Max == 0 || r.Ratio <= r.Max }

// Compare divides each embedded World's value (the Worlds with a ratio
// target) by every peer's, metric by metric.
func Compare(results []*Result) []Ratio {
	var out []Ratio
	for _, ours := range results {
		if ours.Peer || ours.Skipped != "" || !hasRatioTarget(ours.World) {
			continue
		}
		for _, peer := range results {
			if !peer.Peer || peer.Skipped != "" {
				continue
			}
			for _, c := range compared {
				a, okA := comparedValue(ours, c.key, c.stat)
				b, okB := comparedValue(peer, c.key, c.stat)
				if !okA || !okB || b == 0 {
					continue
				}
				out = append(out, Ratio{Metric: c.key, Stat: c.stat, World: ours.World, Peer: peer.World,
					Ours: a, Theirs: b, Ratio: round3(a / b), Max: ratioTarget(ours.World, peer.World)})
			}
		}
	}
	return out
}

func hasRatioTarget(world string) bool {
	for _, t := range ratioTargets {
		if t.world == world {
			return true
		}
	}
	return false
}

func ratioTarget(world, peer string) float64 {
	for _, t := range ratioTargets {
		if t.world == world && (t.peer == "" || t.peer == peer) {
			return t.max
		}
	}
	return 0
}

// comparedValue is a result's statistic on a compared metric: ms, or MB
// for memory.
func comparedValue(r *Result, key, stat string) (float64, bool) {
	if m := r.Memory; m != nil {
		switch {
		case key == "mem_suspended" && m.Suspended != nil:
			return mb(m.Suspended.PeakKB), true
		case key == "mem_inflight" && m.Inflight != nil:
			return mb(m.Inflight.PeakKB), true
		}
	}
	m, ok := r.Metric(key)
	if !ok {
		return 0, false
	}
	if stat == "p50" {
		return m.Stats.P50, true
	}
	return m.Stats.P75, true
}

var comparedLabels = map[string]string{
	"mem_suspended": "Memory: 1,000 suspended runs (MB)",
	"mem_inflight":  "Memory: 64 branches in flight (MB)",
}

// writeRatios prints the ratios as a table: a row per metric, a column per
// World and peer; "!" marks a ratio over its target.
func writeRatios(out io.Writer, ratios []Ratio) {
	if len(ratios) == 0 {
		return
	}
	var pairs []string
	cells := map[string]map[string]string{}
	for _, r := range ratios {
		pair := r.World + " / " + r.Peer
		if cells[pair] == nil {
			cells[pair] = map[string]string{}
			pairs = append(pairs, pair)
		}
		mark := ""
		if !r.Pass() {
			mark = " !"
		}
		cells[pair][r.Metric] = fmt.Sprintf("%s vs %s = %.2f×%s", num(r.Ours), num(r.Theirs), r.Ratio, mark)
	}
	fmt.Fprintln(out, "\nours / peer, same run (p75; 1,020 steps: median run; memory: peak RSS in MB); ! = over target")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "metric\t"+strings.Join(pairs, "\t")+"\t")
	for _, c := range compared {
		row := []string{label(c.key)}
		any := false
		for _, p := range pairs {
			v, ok := cells[p][c.key]
			any = any || ok
			if !ok {
				v = "–"
			}
			row = append(row, v)
		}
		if any {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	tw.Flush()
	for _, t := range ratioTargets {
		peer := t.peer
		if peer == "" {
			peer = "every peer"
		}
		fmt.Fprintf(out, "target: %s ≤ %g× %s on every metric: %s\n", t.world, t.max, peer, verdict(ratios, t.world, t.max))
	}
}

func label(key string) string {
	if l, ok := comparedLabels[key]; ok {
		return l
	}
	return shortLabels[key]
}

func verdict(ratios []Ratio, world string, max float64) string {
	var misses []string
	n := 0
	for _, r := range ratios {
		if r.World != world || r.Max != max {
			continue
		}
		n++
		if !r.Pass() {
			misses = append(misses, fmt.Sprintf("%s vs %s %.2f×", r.Metric, r.Peer, r.Ratio))
		}
	}
	switch {
	case n == 0:
		return "not measured"
	case len(misses) == 0:
		return fmt.Sprintf("pass (%d ratios)", n)
	}
	return fmt.Sprintf("MISS on %d of %d: %s", len(misses), n, strings.Join(misses, ", "))
}
