package faultproxy

import (
	"math"
	"math/rand/v2"
	"time"
)

// Latency says how long a call takes in the modelled setting. The proxy
// forwards a call half that long after it arrived (the request's trip:
// what it writes becomes visible to others then, as mid-call on AWS) and
// passes the answer on when the whole has passed. A call the emulator
// takes longer over is passed on as soon as it is answered: the model is
// a floor, so that on an idle machine the figures are the modelled ones,
// not the modelled ones plus the emulator's.
type Latency func(Call) time.Duration

// InRegionMedians are the median latencies of the calls of a client in
// the same AWS region as the services, as published for DynamoDB
// (single-digit milliseconds,
// https://aws.amazon.com/dynamodb/features/) and as measured from
// Lambda: a transaction costs about two single-item writes, a strongly
// consistent read about 2 ms, an SQS call about 6 ms, an S3 request some
// 15 ms. AppSync has published no latency for an Events publish; it is
// taken to be an HTTPS request to a regional endpoint like the others, 10
// ms (the WebSocket that delivers it passes unheld: the request's half of
// the publish stands for the fan-out). Operations not named take the
// service's default ("" key).
var InRegionMedians = map[string]map[string]time.Duration{
	"DynamoDB": {
		"TransactWriteItems": 10 * time.Millisecond,
		"PutItem":            5 * time.Millisecond,
		"UpdateItem":         5 * time.Millisecond,
		"DeleteItem":         5 * time.Millisecond,
		"BatchWriteItem":     8 * time.Millisecond,
		"GetItem":            2 * time.Millisecond,
		"BatchGetItem":       4 * time.Millisecond,
		"Query":              3 * time.Millisecond,
		"":                   5 * time.Millisecond,
	},
	"SQS":     {"": 6 * time.Millisecond},
	"S3":      {"": 15 * time.Millisecond},
	"AppSync": {"": 10 * time.Millisecond},
}

// inRegionSpread is the log-normal jitter around each median: σ = 0.25
// puts p75 at 1.18× the median and p99 at 1.8×, a tail a little wider
// than DynamoDB's published p99 of under twice the median.
const inRegionSpread = 0.25

// InRegion is the Latency of InRegionMedians with a log-normal jitter of
// its own per call.
func InRegion() Latency {
	return func(c Call) time.Duration {
		ops := InRegionMedians[c.Service]
		median, ok := ops[c.Op]
		if !ok {
			median = ops[""]
		}
		return time.Duration(float64(median) * math.Exp(inRegionSpread*rand.NormFloat64()))
	}
}

// SetLatency makes every call from now on take at least what l says for
// it (nil: no delay).
func (p *Proxy) SetLatency(l Latency) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = l
}

// latencyOf draws the modelled latency of c.
func (p *Proxy) latencyOf(c Call) time.Duration {
	p.mu.Lock()
	l := p.latency
	p.mu.Unlock()
	if l == nil {
		return 0
	}
	return l(c)
}
