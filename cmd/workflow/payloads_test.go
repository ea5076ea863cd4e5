package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

var sealedCLI = workflow.Define("cli.sealed", func(_ workflow.Context, s string) (string, error) { return s, nil })

// TestInspectSealedRun shows a sealed run's input only to a command given
// its key, and says so otherwise, on every World.
func TestInspectSealedRun(t *testing.T) {
	key := make([]byte, 32)
	key[0] = 9
	keyring := "k1:" + base64.StdEncoding.EncodeToString(key)
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			t.Setenv(codec.KeysEnv, keyring)
			kr, err := codec.KeyringFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			chain := codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: kr})
			run, err := workflow.Start(t.Context(), workflow.NewClient(tw, workflow.WithPayloadCodec(chain)), sealedCLI, "iban-DE89-3704")
			if err != nil {
				t.Fatal(err)
			}
			out, err := cliOn(t.Context(), tw, "", "inspect", "run", run.ID, "--full")
			if err != nil || !strings.Contains(out, "iban-DE89-3704") || strings.Contains(out, "(encrypted)") {
				t.Fatalf("with the key:\n%s%v", out, err)
			}
			t.Setenv(codec.KeysEnv, "")
			out, err = cliOn(t.Context(), tw, "", "inspect", "run", run.ID, "--full")
			if err != nil || strings.Contains(out, "DE89") || !strings.Contains(out, "(encrypted)") ||
				!strings.Contains(out, "payload is encrypted; no key for run "+run.ID+" (local k1)") {
				t.Fatalf("without the key:\n%s%v", out, err)
			}
			if _, err := cliOn(t.Context(), tw, "", "inspect", "run", run.ID, "--json"); err == nil || !strings.Contains(err.Error(), "no key for run") {
				t.Fatalf("--json without the key: %v", err)
			}
		})
	}
}

// TestInspectKMSSealedRun reads a run the stack's functions sealed under
// a KMS key of the emulator: given the key (the stack's PayloadKeyArn
// output), the command shows its input; without it, it says the payload
// is encrypted and names the key the run needs.
func TestInspectKMSSealedRun(t *testing.T) {
	tw := openAWS(t, awsworld.Names{})
	cfg := emulator.Config()
	key, err := kms.NewFromConfig(cfg).CreateKey(t.Context(), &kms.CreateKeyInput{Description: aws.String("workflow CLI test")})
	if err != nil {
		t.Fatalf("kms CreateKey: %v", err)
	}
	arn := aws.ToString(key.KeyMetadata.Arn)
	t.Setenv(awsworld.PayloadKeyEnv, arn)
	run, err := workflow.Start(t.Context(), workflow.NewClient(tw, workflow.WithPayloadCodec(awsworld.PayloadCodecFromEnv(cfg))), sealedCLI, "iban-DE89-3704")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cliOn(t.Context(), tw, "", "inspect", "run", run.ID, "--full")
	if err != nil || !strings.Contains(out, "iban-DE89-3704") || strings.Contains(out, "(encrypted)") {
		t.Fatalf("with the key:\n%s%v", out, err)
	}
	t.Setenv(awsworld.PayloadKeyEnv, "")
	out, err = cliOn(t.Context(), tw, "", "inspect", "run", run.ID, "--full")
	if err != nil || strings.Contains(out, "DE89") || !strings.Contains(out, "(encrypted)") ||
		!strings.Contains(out, "payload is encrypted; no key for run "+run.ID+" (kms "+arn) || !strings.Contains(out, "the stack's PayloadKeyArn output") {
		t.Fatalf("without the key:\n%s%v", out, err)
	}
}
