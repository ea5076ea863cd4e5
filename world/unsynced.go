package world

import "context"

// UnsyncedReader is implemented by Worlds that may hold a read back until
// what it returns is durable, and whose writes become durable in the order
// they were made: world/local with WithFullSync fsyncs before GetRun
// returns a run's end or ReadStream a stream's chunks, and a power cut
// leaves a prefix of its commits. These methods read what [Store.GetRun]
// and [Streams.ReadStream] read, without that wait.
//
// They are for a reader that acts on what it reads only by writing to the
// same World, as the engine does at a run's end (it closes the run's
// streams, frees its slot, tells its parent): a power cut that keeps any
// of those writes keeps the write they followed. A reader that hands what
// it read to anyone else (a client's Result, a stream's reader) must use
// [Store.GetRun] and [Streams.ReadStream].
//
// Optional: a World that acknowledges only durable writes, or none (the
// in-memory World), holds no read back, and its reads are already these.
type UnsyncedReader interface {
	GetRunUnsynced(ctx context.Context, id string) (Run, error)
	ReadStreamUnsynced(ctx context.Context, name string, from int64) (chunks [][]byte, closed bool, err error)
}
