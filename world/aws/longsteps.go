package aws

import (
	"errors"
)

// LongStepQueue returns the World on the long-step queue
// (Options.LongStepQueueURL): the same table, bucket, clients and call
// counter, with that queue in place of the World's own. The flow function
// sends it the runs whose next step fits none of its invocations
// (workflow.WorkerOptions.LongStepQueue); a Worker outside Lambda, which
// has no time limit, takes them from it (workflow.WorkerOptions.Queue),
// runs the step, and drives the run on, queuing its later wake-ups on the
// World's own queue. Long sleeps from it hop through that queue, not the
// scheduler, whose target is the World's queue.
func (w *World) LongStepQueue() (*World, error) {
	if w.opts.LongStepQueueURL == "" {
		return nil, errors.New("aws world: no long-step queue: set Options.LongStepQueueURL (WORKFLOW_LONG_STEP_QUEUE_URL; the stack's LongStepQueueUrl output)")
	}
	opts := w.opts
	opts.QueueURL, opts.DeadLetterQueueURL, opts.Scheduler = opts.LongStepQueueURL, "", SchedulerOptions{}
	return &World{opts: opts, ddb: w.ddb, sqs: w.sqs, s3: w.s3, calls: w.calls, streamNext: map[string]int64{},
		retention: w.retention, now: w.now, delayLimit: opts.Scheduler.delayLimit()}, nil
}
