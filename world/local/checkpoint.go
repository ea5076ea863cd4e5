package local

import (
	"context"
	"database/sql"
	"sync"
)

// checkpointEvery is how many commits the writer makes between two
// background checkpoints. A run's commits write two to nine WAL pages
// each (pages_test.go), so 100 commits stay under SQLite's own threshold
// of 1,000 pages: the WAL stays a few megabytes.
const checkpointEvery = 100

// checkpointer copies the WAL's pages into the database file off the
// commit path. SQLite's automatic checkpoint runs inside the commit that
// crosses its threshold, so every hundredth step or so waited 10-15 ms for
// the page copies and their fsyncs. The writer connection turns it off
// (wal_autocheckpoint=0) and pokes this goroutine instead, which runs a
// PASSIVE checkpoint on a connection of its own: PASSIVE waits for no lock,
// so neither the writer nor the readers ever wait for it.
//
// Durability is unchanged: a commit is in the WAL before the checkpoint
// copies it, and the checkpoint syncs the WAL before it copies and the
// database file after, as the automatic one does. SQLite starts the WAL
// over only after a checkpoint that copied every frame, so a frame still
// needed after a power cut is never overwritten.
type checkpointer struct {
	db      *sql.DB
	commits int           // since the last poke; guarded by World.wmu
	poke    chan struct{} // buffered: one pending checkpoint is enough
	done    chan struct{} // closed when run returns
}

func newCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &checkpointer{db: db, poke: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// committed counts a commit and, every checkpointEvery commits, asks for a
// checkpoint without waiting for it. The caller holds World.wmu.
func (c *checkpointer) committed() {
	if c.commits++; c.commits < checkpointEvery {
		return
	}
	c.commits = 0
	select {
	case c.poke <- struct{}{}:
	default: // one is pending already
	}
}

// run checkpoints when poked, until closed is closed. wmu is the World's
// writer mutex.
func (c *checkpointer) run(closed <-chan struct{}, wmu *sync.Mutex) {
	defer close(c.done)
	for {
		select {
		case <-closed:
			return
		case <-c.poke:
			c.checkpoint(wmu)
		}
	}
}

// maxWALFrames bounds the WAL (16 MiB of 4 KiB pages; one wal-index block
// maps 4,096 frames, so a reader's page lookup stays short).
const maxWALFrames = 4096

// checkpoint copies the WAL into the database file without holding the
// writer off. SQLite restarts the WAL from its start only after a
// checkpoint that copied every frame, and a writer that commits while the
// checkpoint runs leaves frames behind, so under a steady stream of
// commits the WAL would only grow. Once it is over maxWALFrames the
// frames written meanwhile (a few commits' worth) are copied with the
// writer held off, so that its next commit restarts the WAL. A failed
// checkpoint is left for the next one: the WAL only grows meanwhile.
func (c *checkpointer) checkpoint(wmu *sync.Mutex) {
	if frames, err := c.passive(); err != nil || frames < maxWALFrames {
		return
	}
	wmu.Lock()
	defer wmu.Unlock()
	c.passive()
}

// passive runs a PASSIVE checkpoint and returns the WAL's size in frames.
func (c *checkpointer) passive() (frames int, err error) {
	var busy, copied int
	err = c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	return frames, err
}
