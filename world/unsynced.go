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
type UnsyncedReader interface {
	GetRunUnsynced(ctx context.Context, id string) (Run, error)
	ReadStreamUnsynced(ctx context.Context, name string, from int64) (chunks [][]byte, closed bool, err error)
}

// GetRunUnsynced reads a run with s's GetRunUnsynced if s is an
// [UnsyncedReader], else with its GetRun.
func GetRunUnsynced(ctx context.Context, s Store, id string) (Run, error) {
	if u, ok := s.(UnsyncedReader); ok {
		return u.GetRunUnsynced(ctx, id)
	}
	return s.GetRun(ctx, id)
}

// ReadStreamUnsynced reads a stream with s's ReadStreamUnsynced if s is an
// [UnsyncedReader], else with its ReadStream.
func ReadStreamUnsynced(ctx context.Context, s Streams, name string, from int64) ([][]byte, bool, error) {
	if u, ok := s.(UnsyncedReader); ok {
		return u.ReadStreamUnsynced(ctx, name, from)
	}
	return s.ReadStream(ctx, name, from)
}
