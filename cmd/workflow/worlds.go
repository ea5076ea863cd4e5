package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/local"
)

const worldHelp = `
Choosing the World (every command):
  --world local --dir DIR   the embedded World in DIR (default: local, .workflow-data); DIR must hold one
  --world aws               the AWS World the Lambda functions use, named by the same environment:
                            WORKFLOW_TABLE, WORKFLOW_QUEUE_URL, WORKFLOW_BUCKET, and the SDK's own
                            (AWS_REGION, AWS_PROFILE, credentials)
  --endpoint URL            send AWS requests to URL (an emulator such as MiniStack)
`

// worldFlags are the flags that choose the World a command opens.
type worldFlags struct {
	kind, dir, endpoint string
	opened              func(world.World) // env.opened
	// codec reads the opened World's sealed runs (payloads.go).
	codec *codec.Chain
}

func registerWorldFlags(fs *flag.FlagSet) *worldFlags {
	f := &worldFlags{}
	fs.StringVar(&f.kind, "world", "local", "the World to open: local or aws")
	fs.StringVar(&f.dir, "dir", ".workflow-data", "the embedded World's data directory (--world local)")
	fs.StringVar(&f.endpoint, "endpoint", "", "AWS endpoint URL, for an emulator (--world aws)")
	return f
}

// open opens the World the flags name, the embedded one with opts. The
// embedded World must exist: a mistyped --dir is an error, not an empty
// World.
func (f *worldFlags) open(ctx context.Context, opts ...local.Option) (world.World, error) {
	w, err := f.openKind(ctx, opts)
	if err == nil && f.opened != nil {
		f.opened(w)
	}
	return w, err
}

func (f *worldFlags) openKind(ctx context.Context, opts []local.Option) (world.World, error) {
	switch f.kind {
	case "local":
		if f.endpoint != "" {
			return nil, fmt.Errorf("%w: --endpoint is for --world aws", errUsage)
		}
		var err error
		if f.codec, err = payloadCodec(nil); err != nil {
			return nil, err
		}
		return local.Open(f.dir, append(opts, local.WithExisting())...)
	case "aws":
		names, err := awsworld.OptionsFromEnv()
		if err != nil {
			return nil, err
		}
		var load []func(*config.LoadOptions) error
		if f.endpoint != "" {
			load = append(load, config.WithBaseEndpoint(f.endpoint))
		}
		cfg, err := config.LoadDefaultConfig(ctx, load...)
		if err != nil {
			return nil, fmt.Errorf("aws world: %w", err)
		}
		if f.codec, err = payloadCodec(&cfg); err != nil {
			return nil, err
		}
		return awsworld.New(cfg, names)
	}
	return nil, fmt.Errorf("%w: --world %q: want local or aws", errUsage, f.kind)
}
