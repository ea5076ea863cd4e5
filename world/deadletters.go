package world

import (
	"context"
	"time"
)

// DeadLetter is a message the queue set aside after it failed too many
// deliveries: its run no longer moves until it is redriven.
type DeadLetter struct {
	Message
	// ID is the queue's own ID of the message.
	ID string
	// Receives is how many times the queue handed it out: the deliveries
	// before it was set aside and, on SQS, which counts every receive
	// alike, each listing or redrive that has received it since.
	Receives int
	// SentAt is when the message was first sent. Queues do not record when
	// they set a message aside (SQS keeps no such time), but it was after
	// SentAt plus the deliveries' visibility timeouts.
	SentAt time.Time
}

// DeadLetters is implemented by Worlds whose queue dead-letters a message
// that failed too many deliveries (the AWS World's dead-letter queue).
// A queue that retries a message for as long as it fails (the embedded
// and in-memory Worlds) has nothing to set aside, and does not implement
// it: optional, since such a queue has no dead letters to list.
type DeadLetters interface {
	// ListDeadLetters returns up to limit dead letters (0: all of them).
	// It leaves them where they are.
	ListDeadLetters(ctx context.Context, limit int) ([]DeadLetter, error)
	// Redrive puts the dead letters that keep selects (nil: every one) back
	// on the queue, without their DedupKey, and returns how many it moved.
	// A Redrive cut short and run again does not queue a message twice.
	Redrive(ctx context.Context, keep func(DeadLetter) bool) (int, error)
}
