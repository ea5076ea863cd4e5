package chat

import (
	"context"
	"errors"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// listenWait bounds how long a delivery waits for a hook that its run
// has yet to create: a session that has just started, or a tool call
// whose part reached the stream before its run suspended on the
// approval hook.
const listenWait = 10 * time.Second

// untilHookExists calls deliver until it finds its hook, backing off from
// 10 ms to 1 s, for up to listenWait. After each miss, giveUp may end the
// wait with an error of its own (the run has ended, say); nil waits on.
func untilHookExists(ctx context.Context, deliver func() error, giveUp func(miss error) error) error {
	deadline := time.Now().Add(listenWait)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		err := deliver()
		if !errors.Is(err, workflow.ErrHookNotFound) {
			return err
		}
		if stop := giveUp(err); stop != nil {
			return stop
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}
