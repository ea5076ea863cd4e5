package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/engine"
	awsrig "github.com/lambdaworkflow/workflow/internal/testrig/awsworld"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/local"
)

// testWorld is a World a test fills directly and the flags the CLI opens
// it with.
type testWorld struct {
	world.World
	flags []string
}

// openWorlds returns the embedded World and, when MiniStack runs, the
// AWS World on resources of the test's own, named in the environment as
// the Lambda functions are given them.
func openWorlds(t *testing.T) map[string]func(t *testing.T) testWorld {
	return map[string]func(t *testing.T) testWorld{
		"local": func(t *testing.T) testWorld {
			dir := t.TempDir()
			w, err := local.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return testWorld{w, []string{"--dir", dir}}
		},
		"aws": func(t *testing.T) testWorld {
			return openAWS(t, awsworld.Names{})
		},
	}
}

// openAWS bootstraps an AWS World on MiniStack with names' options on
// resources of the test's own, and names them in the environment as the
// Lambda functions are given them.
func openAWS(t *testing.T, names awsworld.Names) testWorld {
	w, opts, cfg := awsrig.New(t, "wf-cli-", names)
	t.Setenv("WORKFLOW_TABLE", opts.Table)
	t.Setenv("WORKFLOW_QUEUE_URL", opts.QueueURL)
	t.Setenv("WORKFLOW_BUCKET", opts.Bucket)
	t.Setenv("AWS_REGION", cfg.Region)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	return testWorld{w, []string{"--world", "aws", "--endpoint", emulator.Endpoint}}
}

func createRuns(t *testing.T, w world.World, runs ...world.Run) {
	t.Helper()
	for _, r := range runs {
		r.CreatedAt = time.Now()
		if _, err := w.CreateRun(t.Context(), r, []world.Event{{Type: world.RunCreated, Payload: []byte(`{"workflow":"` + r.Workflow + `"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// cliOn runs the CLI on tw, answering prompts with answer.
func cliOn(ctx context.Context, tw testWorld, answer string, args ...string) (string, error) {
	var out bytes.Buffer
	err := runWith(ctx, append(args, tw.flags...), &env{in: strings.NewReader(answer), out: &out})
	return out.String(), err
}

func TestEveryCommandOnEveryWorld(t *testing.T) {
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			createRuns(t, tw,
				world.Run{ID: "run-a", Workflow: "checkout", Status: world.StatusRunning, Attributes: map[string]string{"customer": "42"}},
				world.Run{ID: "run-b", Workflow: "refund", Status: world.StatusRunning},
				world.Run{ID: "run-c", Workflow: "checkout", Status: world.StatusRunning, Attributes: map[string]string{engine.AttrDeployment: "v7"}},
			)
			cli := func(args ...string) (string, error) { return cliOn(t.Context(), tw, "", args...) }

			out, err := cli("inspect", "runs", "--attr", "customer=42")
			if err != nil || !strings.Contains(out, "run-a") || strings.Contains(out, "run-b") {
				t.Fatalf("attribute filter:\n%s%v", out, err)
			}
			out, err = cli("inspect", "runs", "--deployment", "v7")
			if err != nil || !strings.Contains(out, "run-c") || strings.Contains(out, "run-a") {
				t.Fatalf("deployment filter:\n%s%v", out, err)
			}
			out, err = cli("inspect", "runs", "--workflow", "checkout", "--since", "1h")
			if err != nil || !strings.Contains(out, "run-a") || !strings.Contains(out, "run-c") || strings.Contains(out, "run-b") {
				t.Fatalf("workflow and --since:\n%s%v", out, err)
			}
			if out, err = cli("inspect", "runs", "--until", "1h"); err != nil || strings.Contains(out, "run-") {
				t.Fatalf("--until an hour ago lists runs created now:\n%s%v", out, err)
			}

			if _, err := cli("cancel", "run-a", "--reason", "customer asked"); err != nil {
				t.Fatal(err)
			}
			out, err = cli("inspect", "run", "run-a")
			if err != nil || !strings.Contains(out, "status    cancelled") || !strings.Contains(out, "run_cancelled") || !strings.Contains(out, "customer asked") {
				t.Fatalf("after cancel:\n%s%v", out, err)
			}
			if _, err := cli("cancel", "run-a"); !errors.Is(err, world.ErrRunFinished) {
				t.Fatalf("cancelling a finished run: %v", err)
			}

			// --all asks first; no answer cancels nothing.
			out, err = cliOn(t.Context(), tw, "n\n", "cancel", "--all", "--workflow", "checkout")
			if err == nil || !strings.Contains(out, "cancel 1 runs (run-c … run-c)?") {
				t.Fatalf("unconfirmed --all:\n%s%v", out, err)
			}
			if r, _ := tw.GetRun(t.Context(), "run-c"); r.Status != world.StatusRunning {
				t.Fatalf("an unconfirmed --all cancelled run-c: %s", r.Status)
			}
			out, err = cliOn(t.Context(), tw, "y\n", "cancel", "--all", "--workflow", "checkout", "--reason", "bad deploy")
			if err != nil || !strings.Contains(out, "cancelled run-c") || strings.Contains(out, "run-b") {
				t.Fatalf("confirmed --all:\n%s%v", out, err)
			}
			if out, err = cli("cancel", "--all", "--yes"); err != nil || !strings.Contains(out, "cancelled run-b") {
				t.Fatalf("--all --yes:\n%s%v", out, err)
			}
			out, err = cli("inspect", "runs", "--status", "running")
			if err != nil || strings.Contains(out, "run-") {
				t.Fatalf("runs still running after cancel --all:\n%s%v", out, err)
			}
			if out, _ = cli("inspect", "runs", "--status", "cancelled"); strings.Count(out, "cancelled") != 3 {
				t.Fatalf("three runs cancelled:\n%s", out)
			}
			serveViewer(t, tw)
		})
	}
}

// syncBuffer is a buffer a test reads while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFollowPrintsEventsUntilTheRunEnds(t *testing.T) {
	for name, open := range openWorlds(t) {
		t.Run(name, func(t *testing.T) {
			tw := open(t)
			createRuns(t, tw, world.Run{ID: "live", Workflow: "checkout", Status: world.StatusRunning})
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- runWith(t.Context(), append([]string{"inspect", "run", "live", "--follow", "--full"}, tw.flags...), &env{in: strings.NewReader(""), out: out})
			}()
			waitFor(t, out, "run_created")
			long := `"` + strings.Repeat("x", 200) + `"`
			if _, err := tw.AppendEvents(t.Context(), "live", 2, []world.Event{{Type: world.RunStarted, Payload: []byte(long)}}, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, out, "run_started")
			if _, err := tw.AppendEvents(t.Context(), "live", 3, []world.Event{{Type: world.RunCompleted, Payload: []byte(`{"output":7}`)}},
				&world.RunUpdate{Status: world.StatusCompleted, Output: []byte("7")}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("--follow did not return after the run completed:\n%s", out)
			}
			if s := out.String(); !strings.Contains(s, "run_completed") || !strings.Contains(s, long) || !strings.Contains(s, "output    7") {
				t.Fatalf("followed run (full payloads, output at the end):\n%s", s)
			}
		})
	}
}

// waitFor waits until out holds want; the command writes it as soon as
// the World has the event, so the minute is only a bound for a stuck test.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
}

func TestUsageErrorsAndHelp(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {}} {
		out.Reset()
		if err := run(ctx, args, &out); err != nil || !strings.Contains(out.String(), "inspect runs") || !strings.Contains(out.String(), "--world aws") {
			t.Fatalf("%q: %v\n%s", args, err, out.String())
		}
	}
	for _, args := range [][]string{{"help", "cancel"}, {"cancel", "--help"}, {"cancel", "-h"}} {
		out.Reset()
		if err := run(ctx, args, &out); err != nil || !strings.Contains(out.String(), "usage: workflow cancel") || !strings.Contains(out.String(), "-yes") {
			t.Fatalf("%q: %v\n%s", args, err, out.String())
		}
	}
	missing := t.TempDir() + "/nothing-here"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "runs", "--status", "sleeping"}, `unknown status "sleeping"`},
		{[]string{"inspect", "runs", "--since", "yesterday"}, "neither a time"},
		{[]string{"inspect", "run"}, "wants one run ID"},
		{[]string{"cancel", "run-a", "--all"}, "not both"},
		{[]string{"cancel", "run-a", "--status", "running"}, "filters select runs for --all"},
		{[]string{"inspect", "runs", "--world", "gcp"}, "want local or aws"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"help", "frobnicate"}, "no command"},
	} {
		if err := run(ctx, tc.args, &out); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
	err := run(ctx, []string{"inspect", "runs", "--dir", missing}, &out)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a --dir with no World: %v", err)
	}
	if _, statErr := local.Open(missing, local.WithExisting()); statErr == nil {
		t.Fatal("opening the missing World created it")
	}
}

// serveViewer runs workflow web on tw and reads its run list, under
// loopback and the name --allow-host gave it, never under another.
func serveViewer(t *testing.T, tw testWorld) {
	ctx, stop := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runWith(ctx, append([]string{"web", "--addr", "127.0.0.1:0", "--allow-host", "ops.example"}, tw.flags...), &env{in: strings.NewReader(""), out: out})
	}()
	waitFor(t, out, "/ (read-only)")
	base := strings.Fields(strings.TrimPrefix(out.String(), "viewer on "))[0]
	resp, err := http.Get(base + "api/runs?status=cancelled")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"id"`) != 3 {
		t.Fatalf("the viewer's run list: %s %s", resp.Status, body)
	}
	for host, want := range map[string]int{"ops.example:8081": http.StatusOK, "evil.example": http.StatusMisdirectedRequest} {
		req, _ := http.NewRequest(http.MethodGet, base+"api/runs", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("the viewer asked as %s: %s, want %d", host, resp.Status, want)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("workflow web after Ctrl-C: %v", err)
	}
}
