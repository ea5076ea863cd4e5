package world

import (
	"maps"
	"time"
)

// MatchRun reports whether a run passes a filter's Workflow, Status and
// Attributes conditions. Worlds that filter in memory share it.
func MatchRun(r Run, f RunFilter) bool {
	if f.Workflow != "" && r.Workflow != f.Workflow {
		return false
	}
	if f.Status != "" && r.Status != f.Status {
		return false
	}
	for k, v := range f.Attributes {
		if r.Attributes[k] != v {
			return false
		}
	}
	return true
}

// ApplyUpdate applies a RunUpdate to a run entity at time now.
func ApplyUpdate(r *Run, u RunUpdate, now time.Time) {
	if u.Status != "" {
		r.Status = u.Status
	}
	if u.Output != nil {
		r.Output = u.Output
	}
	if u.Error != nil {
		r.Error = u.Error
	}
	if len(u.Attributes) > 0 {
		if r.Attributes == nil {
			r.Attributes = map[string]string{}
		}
		maps.Copy(r.Attributes, u.Attributes)
	}
	r.UpdatedAt = now
}

// HookBlocks reports whether the existing record held stops claim from
// taking its token at time now: a live hook of another run or correlation,
// or a disposed one still inside its retention.
func HookBlocks(held, claim Hook, now time.Time) bool {
	if held.Disposed {
		return held.RetainUntil.After(now)
	}
	return held.RunID != claim.RunID || held.CorrelationID != claim.CorrelationID
}
