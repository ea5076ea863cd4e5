// Package timeline renders a run's event log for people: one line per
// event, with times relative to the run's start and payloads shortened.
package timeline

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// maxPayload is how much of a payload a line shows.
const maxPayload = 96

// Write renders events to w.
func Write(w io.Writer, events []world.Event) error {
	var r Renderer
	return r.Write(w, events)
}

// String renders events to a string.
func String(events []world.Event) string {
	var b strings.Builder
	_ = Write(&b, events)
	return b.String()
}

// Renderer renders a log written in parts (a run being followed): times
// stay relative to the first event it rendered.
type Renderer struct {
	Full  bool // payloads whole, not shortened
	start time.Time
}

// Write renders events to w.
func (r *Renderer) Write(w io.Writer, events []world.Event) error {
	if len(events) == 0 {
		if !r.start.IsZero() {
			return nil
		}
		_, err := fmt.Fprintln(w, "(no events)")
		return err
	}
	if r.start.IsZero() {
		r.start = events[0].CreatedAt
	}
	for _, ev := range events {
		corr := ev.CorrelationID
		if corr != "" {
			corr = "#" + corr
		}
		payload := string(ev.Payload)
		if !r.Full {
			payload = shorten(payload)
		}
		_, err := fmt.Fprintf(w, "%5d  %10s  %-15s %-5s %s\n",
			ev.Slot, offset(ev.CreatedAt.Sub(r.start)), ev.Type, corr, payload)
		if err != nil {
			return err
		}
	}
	return nil
}

func offset(d time.Duration) string {
	if d < time.Second {
		return "+" + d.Round(time.Microsecond).String()
	}
	return "+" + d.Round(time.Millisecond).String()
}

func shorten(s string) string {
	if len(s) <= maxPayload {
		return s
	}
	return s[:maxPayload-1] + "…"
}
