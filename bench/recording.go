package bench

import (
	"math"
	"math/rand/v2"
	"time"
)

// ReplayRecording replays a recorded agent token stream in (scaled) real
// time through write, one call per chunk, and returns how many it wrote.
// Each chunk carries its index and the time it was written, so the reader
// can time its trip. It is every engine's stream step.
func ReplayRecording(runID string, in StreamInput, write func(Chunk) error) (int, error) {
	Samples.Mark(runID, "agent/start")
	rec := Recording(in.Chunks, in.Length, in.Seed)
	start := time.Now()
	for i, c := range rec {
		at := start.Add(time.Duration(float64(c.At) * in.Scale))
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		if err := write(Chunk{Index: i, Written: sinceBase(), Text: c.Text}); err != nil {
			return i, err
		}
	}
	return len(rec), nil
}

// RecordedChunk is one chunk of a recorded agent response: when it was
// produced, from the start of the response, and its text.
type RecordedChunk struct {
	At   time.Duration
	Text string
}

// The recorded AI agent response of https://useworkflow.dev/docs/performance
// (its chunk trip time benchmark): 2,593 chunks over 52.4 s.
const (
	RecordingChunks  = 2593
	RecordingSeconds = 52.4
)

var words = []string{"the", " workflow", " step", " resumes", " after", " a", " hook", ",", " and", " then",
	" writes", " its", " result", " to", " the", " log", ".", "\n", " Let", " me", " check", " that", " file", ":"}

// Recording generates a recording with the shape of an agent's token
// stream: a pause before the first token, bursts of tokens a few
// milliseconds apart, and a handful of long pauses (tool calls), scaled so
// that its n chunks span exactly seconds. The same seed gives the same
// recording.
func Recording(n int, seconds float64, seed uint64) []RecordedChunk {
	if n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	gaps := make([]float64, n)
	gaps[0] = 1.2 // time to first token, in (unscaled) seconds
	pauses := map[int]bool{}
	for range 6 {
		pauses[1+rng.IntN(max(n-1, 1))] = true
	}
	for i := 1; i < n; i++ {
		switch {
		case pauses[i]:
			gaps[i] = 1.5 + 2*rng.Float64()
		default:
			gaps[i] = -0.012 * math.Log(1-rng.Float64()) // exponential, mean 12 ms
		}
	}
	total := 0.0
	for _, g := range gaps {
		total += g
	}
	scale := seconds / total
	out := make([]RecordedChunk, n)
	at := 0.0
	for i, g := range gaps {
		at += g * scale
		out[i] = RecordedChunk{At: time.Duration(at * float64(time.Second)), Text: words[rng.IntN(len(words))]}
	}
	return out
}

// Chunk is a stream chunk as the agent step writes it.
type Chunk struct {
	Index   int    `json:"i"`
	Written int64  `json:"t"` // nanoseconds since base, when the writer wrote it
	Text    string `json:"d"`
}
