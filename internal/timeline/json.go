package timeline

import (
	"encoding/json"
	"io"

	"github.com/lambdaworkflow/workflow/world"
)

// WriteJSON writes events as the JSON array workflow.Replay reads, one
// event per line, so that two versions of a log compare line by line.
func WriteJSON(w io.Writer, events []world.Event) error {
	out := []byte("[\n")
	for i, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		out = append(out, line...)
		if i < len(events)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	_, err := w.Write(append(out, "]\n"...))
	return err
}
