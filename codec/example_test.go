package codec_test

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var lookup = workflow.DefineStep("example.lookup", func(_ context.Context, card string) (string, error) {
	return "approved " + card, nil
})

var charge = workflow.Define("example.charge", func(ctx workflow.Context, card string) (string, error) {
	return lookup.Call(ctx, card)
})

// A worker and a client share a chain that compresses and encrypts what
// the World stores for each run; the World holds no byte of it in the
// clear, and the client reads the result back.
func Example() {
	// In production: WORKFLOW_PAYLOAD_KEYS=k1:<32 random bytes, base64>.
	os.Setenv(codec.KeysEnv, "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	keys, err := codec.KeyringFromEnv()
	if err != nil {
		panic(err)
	}
	chain := codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: keys})

	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{Codec: chain}).Run(ctx)

	client := workflow.NewClient(w, workflow.WithPayloadCodec(chain))
	run, err := workflow.Start(ctx, client, charge, "4242-4242")
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Result(ctx))

	events, _ := w.Events(ctx, run.ID, 0)
	for _, ev := range events {
		if bytes.Contains(ev.Payload, []byte("4242")) {
			fmt.Println("in the clear:", ev.Type)
		}
	}
	// Output: approved 4242-4242 <nil>
}
