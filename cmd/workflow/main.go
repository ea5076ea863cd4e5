// Command workflow inspects and manages the runs of any World: the
// embedded one in a directory (the default, ./.workflow-data) or the AWS
// World the Lambda functions use (--world aws).
//
//	workflow inspect runs [--status running] [--workflow checkout] [--attr customer=42] [--since 1h]
//	workflow inspect run <run ID> [--follow] [--full] [--json]
//	workflow cancel <run ID> --reason "customer asked"
//	workflow cancel --all --status running --workflow checkout [--yes]
//	workflow dead-letters [--limit 20]
//	workflow redrive [--run ID | --workflow checkout]
//	workflow deployments
//	workflow gc [--retention 720h]
//	workflow web [--addr 127.0.0.1:8081] [--allow-cancel] [--allow-host name]
//	workflow help [command]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/lambdaworkflow/workflow/internal/termtext"
	"github.com/lambdaworkflow/workflow/world"
)

// A command is one verb of the CLI. To add one, add an entry to commands.
type command struct {
	name    string // words that select it: "inspect runs"
	args    string // its positional arguments, for the usage line
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

var commands = []command{
	{"inspect runs", "", "list runs, newest first", inspectRuns},
	{"inspect run", "<run ID>", "show a run and the timeline of its log", inspectRun},
	{"cancel", "<run ID> | --all", "cancel a run, or every run the filters select", cancel},
	{"dead-letters", "", "list the messages the AWS World's queue set aside after too many failed deliveries: runs that no longer move", deadLetters},
	{"redrive", "", "put dead letters back on the queue (all, or --run/--workflow), once what made them fail is fixed", redrive},
	{"deployments", "", "count the runs in flight on each deployment (which old versions may go)", deployments},
	{"gc", "", "delete the finished runs past their retention now (the embedded World's worker does so every 10 minutes)", gc},
	{"migrate run-indexes", "", "list the AWS World's runs written before its listing indexes were write-sharded again (once, after upgrading the stack: docs/AWS.md)", migrateRunIndexes},
	{"web", "", "serve the run viewer: run list, timelines, payloads, live", web},
}

// removed names the commands that are gone and what does their work now,
// so that a script calling one learns where to go instead of reading
// "unknown command".
var removed = map[string]string{
	"replay": "the deploy gate replays runs in flight against your own workflows, which no prebuilt " +
		"command holds: it is a few lines of your own main calling workflow.ReplayRunning with your " +
		"registry (see docs/AWS.md, \"Before each deploy: the replay gate\")",
}

// env is what a command reads and writes besides its arguments.
type env struct {
	in  io.Reader // answers to confirmation prompts
	out io.Writer
	// help makes the command's flag set print its flags on -h.
	help bool
	// opened, if set, is given the World a command opens (tests count its
	// API calls).
	opened func(world.World)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := runWith(ctx, os.Args[1:], &env{in: os.Stdin, out: os.Stdout})
	if err != nil {
		fmt.Fprintln(termtext.Writer{W: os.Stderr}, "workflow:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("bad usage (see workflow help)")

// run runs the CLI with no terminal to prompt: a command that would ask
// for confirmation reads no answer and stops.
func run(ctx context.Context, args []string, out io.Writer) error {
	return runWith(ctx, args, &env{in: strings.NewReader(""), out: out})
}

func runWith(ctx context.Context, args []string, env *env) error {
	// Everything a command writes goes through one escaping writer: the
	// IDs, names, attributes, errors and source it prints are others'.
	safe := *env
	safe.out = termtext.Writer{W: env.out}
	env = &safe
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			return helpFor(strings.Join(args[1:], " "), env.out)
		}
		return writeUsage(env.out)
	}
	cmd, rest, ok := lookup(args)
	if !ok {
		if instead, gone := removed[args[0]]; gone {
			return fmt.Errorf("%w: %q was removed: %s", errUsage, args[0], instead)
		}
		return fmt.Errorf("%w: unknown command %q", errUsage, strings.Join(args, " "))
	}
	err := cmd.run(ctx, env, rest)
	if errors.Is(err, flag.ErrHelp) {
		return helpFor(cmd.name, env.out)
	}
	return err
}

// lookup finds the command whose words begin args, the longest first.
func lookup(args []string) (command, []string, bool) {
	var best command
	words := 0
	for _, c := range commands {
		w := strings.Fields(c.name)
		if len(w) > words && len(args) >= len(w) && strings.Join(args[:len(w)], " ") == c.name {
			best, words = c, len(w)
		}
	}
	return best, args[words:], words > 0
}

func writeUsage(out io.Writer) error {
	fmt.Fprintln(out, "usage: workflow <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(out, "  %-32s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(out, "\nRun 'workflow help <command>' for a command's flags.")
	fmt.Fprint(out, worldHelp)
	fmt.Fprint(out, payloadHelp)
	return nil
}

// helpFor prints a command's usage and flags; its flag set is built by
// running it with -h.
func helpFor(name string, out io.Writer) error {
	cmd, rest, ok := lookup(strings.Fields(name))
	if !ok || len(rest) > 0 {
		return fmt.Errorf("%w: no command %q", errUsage, name)
	}
	fmt.Fprintf(out, "usage: workflow %s [flags]\n\n%s\n\nflags:\n", strings.TrimSpace(cmd.name+" "+cmd.args), cmd.summary)
	if err := cmd.run(context.Background(), &env{in: strings.NewReader(""), out: out, help: true}, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		return fmt.Errorf("help for %s: %w", name, err)
	}
	return nil
}

// newFlags returns a command's flag set with the flags that choose the
// World. Parse errors are returned, not printed; help prints the flags.
func newFlags(name string, env *env) (*flag.FlagSet, *worldFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if env.help {
		fs.SetOutput(env.out)
		fs.Usage = fs.PrintDefaults
	}
	wf := registerWorldFlags(fs)
	wf.opened = env.opened
	return fs, wf
}

// parse parses flags that may come before or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s: %w", errUsage, fs.Name(), err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// noArgs parses a command's flags when it takes no positional argument.
func noArgs(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%w: %s: unexpected %q", errUsage, fs.Name(), rest[0])
	}
	return err
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
