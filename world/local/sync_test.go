package local

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
)

// synchronous reads the writer connection's synchronous setting (1 NORMAL,
// 2 FULL).
func synchronous(t *testing.T, w *World) int {
	t.Helper()
	w.wmu.Lock()
	defer w.wmu.Unlock()
	var v int
	if err := w.wconn.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The writer keeps the durability it was opened with, also after the
// queue's unsynced transactions, which a full-sync World runs with
// synchronous=NORMAL for a moment.
func TestWriterKeepsItsSynchronousSetting(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		want int
	}{{"default", nil, 1}, {"full sync", []Option{WithFullSync()}, 2}} {
		t.Run(c.name, func(t *testing.T) {
			w, err := Open(t.TempDir(), c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if got := synchronous(t, w); got != c.want {
				t.Fatalf("after Open: synchronous = %d, want %d", got, c.want)
			}
			ctx := t.Context()
			if err := w.Enqueue(ctx, world.Message{RunID: "r"}); err != nil {
				t.Fatal(err)
			}
			d, err := w.Receive(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Ack(ctx, d); err != nil {
				t.Fatal(err)
			}
			if got := synchronous(t, w); got != c.want {
				t.Fatalf("after Receive and Ack: synchronous = %d, want %d", got, c.want)
			}
		})
	}
}
