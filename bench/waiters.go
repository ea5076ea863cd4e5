package bench

import (
	"context"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/internal/testrig/waitrate"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// waiters measures, on the AWS World, the requests per waiting minute of
// one caller of Run.Result, of Run.Readable and of a responding hook's
// Resume, while the run it waits on sleeps. The caller has a World of its
// own on the same resources, so its call counter holds its requests alone,
// not the worker's.
func (s *suite) waiters() error {
	sdk, ok := s.e.(*sdkEngine)
	if !ok || s.cfg.WaitNap <= 0 {
		return nil
	}
	shared, ok := sdk.w.(*awsworld.World)
	if !ok {
		return nil
	}
	waiter, err := awsworld.New(emulator.Config(), shared.Options())
	if err != nil {
		return err
	}
	defer waiter.Close()
	c := workflow.NewClient(waiter)
	perMinute := map[string]float64{}
	for _, k := range waitrate.Kinds {
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.WaitNap+time.Minute)
		rate, err := waitrate.Rate(ctx, k, c, waiter, s.cfg.WaitNap)
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
