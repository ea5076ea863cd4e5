package bench

import (
	"math"
	"testing"

	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// The cost model prices request units, not DynamoDB calls; every SQS
// request; S3 reads and writes apart, deletes free; and a sleep by hops
// 96 times a day.
func TestPricesFollowTheirTable(t *testing.T) {
	p := prices{WriteUnit: 1, ReadUnit: 10, SQSRequest: 100, S3Write: 1000, S3Read: 10000, LambdaRequest: 100000, SchedulerInvocation: 1e6}
	got := p.of(map[string]float64{
		"DynamoDB.TransactWriteItems": 5, "SQS.SendMessage": 1, "SQS.DeleteMessage": 1,
		"S3.PutObject": 1, "S3.GetObject": 2, "S3.DeleteObjects": 7, "Lambda.Invoke": 1,
	}, awsworld.RequestUnits{Write: 4, Read: 0.5})
	if want := 4 + 5.0 + 200 + 1000 + 20000 + 100000; got != want {
		t.Errorf("priced %v, want %v", got, want)
	}
	d := p.price(&Costs{PerHop: map[string]float64{"SQS.SendMessage": 1}, PerHopUnits: awsworld.RequestUnits{Read: 0.5}})
	if want := 96 * (100 + 5 + 2*100 + 100000.0); math.Abs(d.PerSleepingDay-want) > 1e-6 {
		t.Errorf("a sleeping day priced %v, want %v", d.PerSleepingDay, want)
	}
	if want := 1e6 + 2*100 + 100000.0; d.PerScheduledSleep != want {
		t.Errorf("a scheduled sleep priced %v, want %v", d.PerScheduledSleep, want)
	}
}
