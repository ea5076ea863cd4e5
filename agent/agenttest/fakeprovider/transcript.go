package fakeprovider

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Load reads a recorded stream: a text/event-stream transcript, as the
// provider sent it, whose events become a 200 reply's Events. A Bedrock
// transcript is written the same way ("event: contentBlockDelta", then
// its JSON payload on a data line) and sent in the EventStream encoding.
// Lines starting with ":" are comments.
func Load(path string) (Reply, error) {
	f, err := os.Open(path)
	if err != nil {
		return Reply{}, err
	}
	defer f.Close()
	var events []Event
	var cur Event
	var data []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if data != nil {
				cur.Data = strings.Join(data, "\n")
				events = append(events, cur)
			}
			cur, data = Event{}, nil
		case field == "":
			// a comment
		case field == "event":
			cur.Type = value
		case field == "data":
			data = append(data, value)
		default:
			return Reply{}, fmt.Errorf("%s:%d: unknown field %q", path, n, field)
		}
	}
	if err := sc.Err(); err != nil {
		return Reply{}, err
	}
	if data != nil {
		cur.Data = strings.Join(data, "\n")
		events = append(events, cur)
	}
	if len(events) == 0 {
		return Reply{}, fmt.Errorf("%s: no events", path)
	}
	return Reply{Events: events}, nil
}

// MustLoad is Load for tests and examples: it panics if the transcript
// cannot be read.
func MustLoad(path string) Reply {
	r, err := Load(path)
	if err != nil {
		panic(err)
	}
	return r
}
