package bench

import (
	"context"
	"time"

	"github.com/lambdaworkflow/workflow/internal/waitrate"
)

// waiters measures, on a World that counts its calls, the requests per
// waiting minute of one caller of Run.Result, of Run.Readable and of a
// responding hook's Resume, while the run it waits on sleeps. The worker
// shares the World; its idle long poll is left out, and it makes no other
// call while the run sleeps.
func (s *suite) waiters() error {
	sdk, ok := s.e.(*sdkEngine)
	if s.calls == nil || !ok || s.cfg.WaitNap <= 0 {
		return nil
	}
	perMinute := map[string]float64{}
	for _, k := range waitrate.Kinds {
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.WaitNap+time.Minute)
		rate, err := waitrate.Rate(ctx, k, sdk.c, s.calls, s.cfg.WaitNap, "SQS.ReceiveMessage")
		cancel()
		if err != nil {
			return err
		}
		perMinute[k.Name] = rate * 60
	}
	if s.res.Costs == nil {
		s.res.Costs = &Costs{}
	}
	s.res.Costs.WaitingPerMinute = perMinute
	return nil
}
