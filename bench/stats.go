package bench

import (
	"math"
	"slices"
	"time"
)

// Summary is a pooled sample's percentiles, by the nearest-rank method
// (the methodology of https://useworkflow.dev/docs/performance), in milliseconds.
type Summary struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50Ms"`
	P75  float64 `json:"p75Ms"`
	P99  float64 `json:"p99Ms"`
	Min  float64 `json:"minMs"`
	Max  float64 `json:"maxMs"`
	Mean float64 `json:"meanMs"`
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// samples: the smallest sample that at least p% of the samples are at or
// below. With 100 or fewer samples a p99 is the slowest one.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return nearestRank(s, p)
}

func nearestRank(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Summarize pools samples into a Summary.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Summary{
		N:    len(s),
		P50:  ms(nearestRank(s, 50)),
		P75:  ms(nearestRank(s, 75)),
		P99:  ms(nearestRank(s, 99)),
		Min:  ms(s[0]),
		Max:  ms(s[len(s)-1]),
		Mean: ms(sum / time.Duration(len(s))),
	}
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000 // µs resolution
}
