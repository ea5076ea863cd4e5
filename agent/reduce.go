package agent

import "strings"

// Text returns the assistant text a client shows after reading parts, in
// order: the text-delta parts, less those of a model call attempt that a
// later start part of the same call replaced.
func Text(parts []Part) string {
	var b strings.Builder
	for _, p := range Settle(parts) {
		if p.Type == PartTextDelta {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Settle returns parts without those a retried model call replaced: what
// a client keeps. It is the reducer a UI applies as parts arrive.
func Settle(parts []Part) []Part {
	var kept []Part
	started := map[string]int{} // call → index in kept of its latest start
	for _, p := range parts {
		if p.Type == PartStart {
			if i, ok := started[p.Call]; ok {
				kept = dropCall(kept, i, p.Call)
			}
			started[p.Call] = len(kept)
		}
		kept = append(kept, p)
	}
	return kept
}

// dropCall removes call's parts from kept[from:]: a call's attempt streams
// without another call in between, so nothing else is there.
func dropCall(kept []Part, from int, call string) []Part {
	out := kept[:from]
	for _, p := range kept[from:] {
		if p.Call != call {
			out = append(out, p)
		}
	}
	return out
}
