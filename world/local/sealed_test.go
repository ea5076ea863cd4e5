package local_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
)

var sealedEcho = workflow.DefineStep("local.sealedEcho", func(_ context.Context, s string) (string, error) {
	return s + " approved", nil
})

var sealedFlow = workflow.Define("local.sealed", func(ctx workflow.Context, s string) (string, error) {
	return sealedEcho.Call(ctx, s)
})

// TestSealedRunOnDisk reads the database file itself: a sealed run's data
// is in no row, and a flipped byte of its stored output fails the reader
// with ErrTampered instead of returning something else.
func TestSealedRunOnDisk(t *testing.T) {
	const secret = "iban-DE89-3704-0044"
	dir := t.TempDir()
	w := open(t, dir)
	kr, err := codec.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	chain := codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: kr})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go func() { _ = workflow.NewWorker(w, workflow.WorkerOptions{Codec: chain}).Run(ctx) }()
	client := workflow.NewClient(w, workflow.WithPayloadCodec(chain))
	run, err := workflow.Start(ctx, client, sealedFlow, secret)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); err != nil || out != secret+" approved" {
		t.Fatalf("result %q, %v", out, err)
	}

	// The World is still open and its worker may be writing (a run's end
	// is followed by its own bookkeeping): wait for its lock as it does.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "world.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows int
	err = db.QueryRow(`SELECT (SELECT count(*) FROM events WHERE run_id = ?1 AND instr(payload, ?2) > 0)
		+ (SELECT count(*) FROM runs WHERE id = ?1 AND (instr(input, ?2) > 0 OR instr(output, ?2) > 0))`, run.ID, []byte("DE89")).Scan(&rows)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d rows of the database hold the sealed run's data in the clear", rows)
	}

	var output []byte
	if err := db.QueryRow(`SELECT output FROM runs WHERE id = ?`, run.ID).Scan(&output); err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(output, []byte(`":"`)) + 10 // inside the base64 of the sealed output
	output[at] ^= 'A' ^ 'B'
	if _, err := db.Exec(`UPDATE runs SET output = ? WHERE id = ?`, output, run.ID); err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); !errors.Is(err, codec.ErrTampered) {
		t.Fatalf("Result of a flipped output = %q, %v; want ErrTampered", out, err)
	}
}
