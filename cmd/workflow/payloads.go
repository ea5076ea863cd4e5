package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

const payloadHelp = `
Reading sealed runs (payload codecs): the command decodes a run's payloads only with its key:
  WORKFLOW_PAYLOAD_KEYS, WORKFLOW_PAYLOAD_KEY_FILE   the embedded World's keyring (see package codec)
  WORKFLOW_PAYLOAD_KMS_KEY                          --world aws: decrypt data keys with AWS KMS
  Without it, an encrypted run's payloads show as "(encrypted)" and the command says why.
`

// payloadCodec is the chain the command reads runs with: compressed
// payloads always decode; encrypted ones with the keyring or, on AWS,
// KMS that the environment gives.
func payloadCodec(cfg *aws.Config) (*codec.Chain, error) {
	opts := codec.Options{Codecs: []codec.Codec{zstd.New(0)}}
	keys, err := codec.KeyringFromEnv()
	switch {
	case err == nil:
		opts.Keys = keys
	case !errors.Is(err, codec.ErrNoKeys):
		return nil, err
	case cfg != nil && os.Getenv(awsworld.PayloadKeyEnv) != "":
		opts.Keys = awsworld.NewKMSKeys(*cfg, os.Getenv(awsworld.PayloadKeyEnv))
	}
	return codec.New(opts), nil
}

// noteUnreadable says why a run's payloads show as "(encrypted)", and,
// when the command was given no key, how to give it one.
func noteUnreadable(env *env, err error) {
	if err == nil {
		return
	}
	fmt.Fprintf(env.out, "payloads  %v\n", err)
	if noKey, ok := errors.AsType[*codec.NoKeyError](err); ok && noKey.Err == nil {
		fmt.Fprintf(env.out, "          (give the command the key: %s, on --world aws the stack's PayloadKeyArn output; or %s)\n", awsworld.PayloadKeyEnv, codec.KeysEnv)
	}
}
