package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lambdaworkflow/workflow/world"
)

// WriteStream implements world.Streams. With WithFullSync the chunks are
// fenced, not synced: a run's steps write them, and ReadStream syncs before
// it hands them to a reader.
func (w *World) WriteStream(_ context.Context, name string, chunks [][]byte) error {
	err := w.write(func(s *writeStmts) error {
		w.dur.fenceNext(streamTopic(name))
		length, closed, err := streamState(s.streamState.QueryRow(name))
		if err != nil {
			return err
		}
		if closed {
			return world.ErrStreamClosed
		}
		for i, c := range chunks {
			if _, err := s.insertChunk.Exec(name, length+int64(i), c); err != nil {
				return err
			}
		}
		_, err = s.putStreamLength.Exec(name, length+int64(len(chunks)))
		return err
	})
	if err != nil {
		return fmt.Errorf("write stream %s: %w", name, err)
	}
	w.signals.fire(streamTopic(name))
	return nil
}

// CloseStream implements world.Streams.
func (w *World) CloseStream(_ context.Context, name string) error {
	if err := w.write(func(s *writeStmts) error {
		w.dur.fenceNext(streamTopic(name))
		_, err := s.closeStream.Exec(name, w.clock.Now().UnixNano())
		return err
	}); err != nil {
		return fmt.Errorf("close stream %s: %w", name, err)
	}
	w.signals.fire(streamTopic(name))
	return nil
}

// ReadStream implements world.Streams.
func (w *World) ReadStream(ctx context.Context, name string, from int64) ([][]byte, bool, error) {
	chunks, closed, err := w.ReadStreamUnsynced(ctx, name, from)
	if err == nil && (len(chunks) > 0 || closed) {
		if err := w.dur.awaitFence(streamTopic(name)); err != nil {
			return nil, false, fmt.Errorf("read stream %s: %w", name, err)
		}
	}
	return chunks, closed, err
}

// ReadStreamUnsynced implements world.UnsyncedReader: ReadStream without
// waiting for the chunks or the close to be durable (WithFullSync).
func (w *World) ReadStreamUnsynced(ctx context.Context, name string, from int64) ([][]byte, bool, error) {
	// The closed flag is read first: a stream closed by then has all its
	// chunks in place for the read that follows, so closed is never
	// reported with chunks missing.
	_, closed, err := streamState(w.rs.streamState.QueryRowContext(readContext(ctx), name))
	if err != nil {
		return nil, false, fmt.Errorf("read stream %s: %w", name, err)
	}
	rows, err := w.rs.chunks.QueryContext(readContext(ctx), name, max(from, 0))
	if err != nil {
		return nil, false, fmt.Errorf("read stream %s: %w", name, err)
	}
	defer rows.Close()
	var chunks [][]byte
	for rows.Next() {
		var c []byte
		if err := rows.Scan(&c); err != nil {
			return nil, false, fmt.Errorf("read stream %s: %w", name, err)
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read stream %s: %w", name, err)
	}
	return chunks, closed, nil
}

// streamState reads a stream's length and closed flag; a stream never
// written is empty and open.
func streamState(row *sql.Row) (length int64, closed bool, err error) {
	err = row.Scan(&length, &closed)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return length, closed, err
}
