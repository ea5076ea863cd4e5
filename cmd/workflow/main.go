// Command workflow inspects and manages runs in a World: by default the
// embedded one in ./.workflow-data.
//
//	workflow inspect runs [--status running] [--workflow checkout] [--attr customer=42]
//	workflow inspect run <run ID> [--json]
//	workflow cancel <run ID> --reason "customer asked"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  workflow inspect runs [--status s] [--workflow name] [--attr key=value]... [--limit n]
  workflow inspect run <run ID> [--json]
  workflow cancel <run ID> [--reason text]

Every command takes --dir (default .workflow-data), the embedded World's data directory.
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "workflow:", err)
		if errors.Is(err, errUsage) {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("bad usage")

func run(ctx context.Context, args []string, out io.Writer) error {
	switch {
	case len(args) >= 2 && args[0] == "inspect" && args[1] == "runs":
		return inspectRuns(ctx, args[2:], out)
	case len(args) >= 2 && args[0] == "inspect" && args[1] == "run":
		return inspectRun(ctx, args[2:], out)
	case len(args) >= 1 && args[0] == "cancel":
		return cancel(ctx, args[1:], out)
	}
	return errUsage
}

// newFlags returns a flag set with the options every command shares.
func newFlags(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", ".workflow-data", "the embedded World's data directory")
	return fs, dir
}

// parse parses flags that may come before or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// oneRunID parses a command's flags and its single run ID argument.
func oneRunID(fs *flag.FlagSet, args []string) (string, error) {
	rest, err := parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(rest) != 1 {
		return "", fmt.Errorf("%w: %s wants one run ID", errUsage, fs.Name())
	}
	return rest[0], nil
}
