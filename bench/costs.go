package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// Costs is the AWS World's cost model: API calls and DynamoDB request
// units per operation, and what they come to in dollars.
type Costs struct {
	// PerStep is the marginal cost of one inline step: the calls of a
	// 25-step run less those of a 5-step run, over 20.
	PerStep map[string]float64 `json:"perStep"`
	// PerResume is one resume cycle: ResumeHook, the replay, the step that
	// follows, the next hook's claim and the suspension.
	PerResume      map[string]float64    `json:"perResume,omitempty"`
	PerResumeUnits awsworld.RequestUnits `json:"perResumeUnits"`
	// Crowd is a resume of a responding hook, alone and among CrowdCallers
	// concurrent ones.
	Crowd *CrowdCosts `json:"crowd,omitempty"`
	// History is a resume cycle on a warm worker after each of
	// HistoryLengths events.
	History []HistoryCost `json:"history,omitempty"`
	// PerStepUnits are PerStep's DynamoDB request units.
	PerStepUnits awsworld.RequestUnits `json:"perStepUnits"`
	// PerHop is one early wake-up of a sleep beyond SQS's delay limit
	// when the stack has no scheduler: the World's calls and units of
	// the check and the re-queue (the Lambda's receive and delete of
	// the message are added when pricing it).
	PerHop      map[string]float64    `json:"perHop,omitempty"`
	PerHopUnits awsworld.RequestUnits `json:"perHopUnits"`
	// Dollars prices the above (prices.go).
	Dollars *Dollars `json:"dollars,omitempty"`
	// WaitingPerMinute is the requests a minute of one waiting caller, by
	// what it waits on (result, readable, reply), after its first second.
	WaitingPerMinute map[string]float64 `json:"waitingPerMinute,omitempty"`
	// DynamoDBWritesPerStep and SQSSendsPerStep sum PerStep for the
	// target (≤ 2 DynamoDB writes and no SQS message per inline step).
	DynamoDBWritesPerStep float64 `json:"dynamoDBWritesPerStep"`
	SQSSendsPerStep       float64 `json:"sqsSendsPerStep"`
	Note                  string  `json:"note"`
}

var ddbWrites = []string{"DynamoDB.PutItem", "DynamoDB.UpdateItem", "DynamoDB.DeleteItem", "DynamoDB.TransactWriteItems", "DynamoDB.BatchWriteItem"}

// costs measures the per-step API calls and request units of the AWS
// World, and one early hop.
func (s *suite) costs() error {
	if s.calls == nil {
		return nil
	}
	measure := func(steps int) (map[string]int64, awsworld.RequestUnits, error) {
		s.quiesce() // what an earlier run left is not this one's
		s.calls.ResetCalls()
		st, _, err := s.runToEnd(s.seq(steps, 0), 5*time.Minute)
		s.quiesce()
		Samples.Forget(st.id)
		return s.calls.Calls(), s.calls.Units(), err
	}
	small, smallUnits, err := measure(5)
	if err != nil {
		return err
	}
	big, bigUnits, err := measure(25)
	if err != nil {
		return err
	}
	per := map[string]float64{}
	for k := range mapsUnion(small, big) {
		if v := float64(big[k]-small[k]) / 20; v != 0 {
			per[k] = v
		}
	}
	c := &Costs{PerStep: per, Note: "SQS.ReceiveMessage is the worker's idle long poll, not a per-step cost"}
	for _, k := range ddbWrites {
		c.DynamoDBWritesPerStep += per[k]
	}
	c.SQSSendsPerStep = per["SQS.SendMessage"] + per["SQS.SendMessageBatch"]
	diff := subUnits(bigUnits, smallUnits)
	c.PerStepUnits = awsworld.RequestUnits{Read: diff.Read / 20, Write: diff.Write / 20}
	if c.PerHop, c.PerHopUnits, err = s.hop(); err != nil {
		return err
	}
	s.res.Costs = c
	return nil
}

// quiesce waits, at most 10 s, until the World has made no call for half
// a second: the worker has done what the run's end left it (the ack, the
// finished run's expiry stamps), so that it is counted with the run. It
// reads the World's own counter, not AWS.
func (s *suite) quiesce() {
	last, quietSince := s.calls.Calls(), time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Since(quietSince) < 500*time.Millisecond && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if now := s.calls.Calls(); !maps.Equal(now, last) {
			last, quietSince = now, time.Now()
		}
	}
}

// earlyRequeuer is the AWS World's early wake-up check (its flow Lambda
// calls it for each message it is handed).
type earlyRequeuer interface {
	RequeueIfEarly(ctx context.Context, msg world.Message) (bool, error)
}

// hop measures one early wake-up of a sleeping run: a message due in a
// week, delivered at SQS's 15-minute limit, is checked against the run's
// log head and queued again.
func (s *suite) hop() (map[string]float64, awsworld.RequestUnits, error) {
	w, ok := s.calls.(interface {
		world.World
		earlyRequeuer
	})
	if !ok {
		return nil, awsworld.RequestUnits{}, nil
	}
	id := newRunID()
	now := time.Now()
	if _, err := w.CreateRun(s.ctx, world.Run{ID: id, Workflow: "bench.sleeper", Status: world.StatusRunning, CreatedAt: now, UpdatedAt: now}, nil); err != nil {
		return nil, awsworld.RequestUnits{}, err
	}
	s.calls.ResetCalls()
	msg := world.Message{RunID: id, DeliverAt: now.Add(7 * 24 * time.Hour), DedupKey: id + "/wake/1/1"}
	early, err := w.RequeueIfEarly(s.ctx, msg)
	if err == nil && !early {
		err = errors.New("a message due in a week did not count as early")
	}
	if err != nil {
		return nil, awsworld.RequestUnits{}, fmt.Errorf("early hop of run %s: %w", id, err)
	}
	calls := map[string]float64{}
	for k, v := range s.calls.Calls() {
		calls[k] = float64(v)
	}
	return calls, s.calls.Units(), nil
}

func subUnits(a, b awsworld.RequestUnits) awsworld.RequestUnits {
	return awsworld.RequestUnits{Read: a.Read - b.Read, Write: a.Write - b.Write}
}

func averageUnits(units []awsworld.RequestUnits) awsworld.RequestUnits {
	var sum awsworld.RequestUnits
	for _, u := range units {
		sum.Read += u.Read / float64(len(units))
		sum.Write += u.Write / float64(len(units))
	}
	return sum
}
