package aws

import (
	"context"
	"errors"

	"github.com/lambdaworkflow/workflow/world"
)

// StartRun implements world.RunStarter: CreateRun's transaction, then the
// message. DynamoDB and SQS cannot take both in one write, so a crash
// between them leaves the run stored and due now with no message: the
// stuck-run check re-queues it (overdue.go), as it does a Start whose
// message was lost.
//
// A new run's message goes without its DedupKey: only the start that
// created the run gets here, so there is no other message of the key to
// drop, and the key's marker would cost a put, an update and, at
// delivery, a delete on the way to the run's first step. A start that
// finds the run unfinished (a retry, or a start racing another) queues
// with the key, so that repeated starts queue one message.
func (w *World) StartRun(ctx context.Context, run world.Run, first []world.Event, msg world.Message) (world.Run, error) {
	created, err := w.CreateRun(ctx, run, first)
	switch {
	case errors.Is(err, world.ErrRunExists) && !created.Status.Terminal():
		if qerr := w.Enqueue(ctx, msg); qerr != nil {
			return created, qerr
		}
		return created, err
	case err != nil:
		return created, err
	}
	msg.DedupKey = ""
	return created, w.Enqueue(ctx, msg)
}
