package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/worldtest"
)

// countingCLI runs the CLI on tw and returns what it printed and the API
// calls of the World it opened.
func countingCLI(t *testing.T, tw testWorld, args ...string) (string, map[string]int64, error) {
	t.Helper()
	var out bytes.Buffer
	var opened *awsworld.World
	err := runWith(t.Context(), append(args, tw.flags...), &env{
		in: strings.NewReader(""), out: &out,
		opened: func(w world.World) { opened = w.(*awsworld.World) },
	})
	if opened == nil {
		t.Fatalf("%q opened no AWS World: %v", args, err)
	}
	return out.String(), opened.Calls(), err
}

// Dead letters of real runs, on an AWS World whose queue dead-letters a
// message after two deliveries: listed with their runs' workflows, and
// redriven by run, by workflow and all, each once.
func TestDeadLettersAndRedriveOnAWS(t *testing.T) {
	tw := openAWS(t, awsworld.Names{DeadLetterAfter: 2})
	ctx := t.Context()
	createRuns(t, tw,
		world.Run{ID: "run-a", Workflow: "checkout", Status: world.StatusRunning},
		world.Run{ID: "run-b", Workflow: "refund", Status: world.StatusRunning},
		world.Run{ID: "run-c", Workflow: "checkout", Status: world.StatusRunning},
	)
	for _, id := range []string{"run-a", "run-b", "run-c"} {
		if err := tw.Enqueue(ctx, world.Message{RunID: id, DedupKey: id + "/wake"}); err != nil {
			t.Fatal(err)
		}
	}
	worldtest.FailUntilDead(ctx, t, tw.World, 3)

	out, calls, err := countingCLI(t, tw, "dead-letters")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 {
			rows[f[0]] = strings.Join(f[1:4], " ")
		}
	}
	for run, want := range map[string]string{"run-a": "checkout running 3×", "run-b": "refund running 3×", "run-c": "checkout running 3×"} {
		if rows[run] != want {
			t.Errorf("dead-letters shows %s as %q, want %q:\n%s", run, rows[run], want, out)
		}
	}
	if !strings.Contains(out, "3 dead letters") {
		t.Errorf("dead-letters does not count them:\n%s", out)
	}
	t.Logf("dead-letters of 3 runs: %v", calls)
	if calls["SQS.SendMessage"]+calls["SQS.DeleteMessage"] != 0 {
		t.Errorf("listing dead letters sent or deleted messages: %v", calls)
	}
	if reads := calls["DynamoDB.GetItem"] + calls["DynamoDB.Query"]; reads > 3 {
		t.Errorf("listing the dead letters of 3 runs read the table %d times, want at most one read a run: %v", reads, calls)
	}

	out, calls, err = countingCLI(t, tw, "redrive", "--run", "run-a")
	if err != nil || !strings.Contains(out, "redrove 1 dead letters") {
		t.Fatalf("redrive --run run-a:\n%s%v", out, err)
	}
	if calls["SQS.SendMessage"] != 1 || calls["SQS.DeleteMessage"] != 1 || calls["DynamoDB.GetItem"]+calls["DynamoDB.Query"] != 0 {
		t.Errorf("redrive of one run's dead letter made %v; want one send and one delete, and no read of a run", calls)
	}
	out, err = cliOn(ctx, tw, "", "redrive", "--workflow", "refund")
	if err != nil || !strings.Contains(out, "redrove 1 dead letters") {
		t.Fatalf("redrive --workflow refund:\n%s%v", out, err)
	}
	out, err = cliOn(ctx, tw, "", "dead-letters")
	if err != nil || !strings.Contains(out, "run-c") || strings.Contains(out, "run-a") || strings.Contains(out, "run-b") {
		t.Fatalf("dead-letters after two redrives: want run-c's alone:\n%s%v", out, err)
	}
	if out, err = cliOn(ctx, tw, "", "redrive"); err != nil || !strings.Contains(out, "redrove 1 dead letters") {
		t.Fatalf("redrive of all:\n%s%v", out, err)
	}
	if out, err = cliOn(ctx, tw, "", "dead-letters"); err != nil || !strings.Contains(out, "no dead letters") {
		t.Fatalf("dead-letters after redriving all:\n%s%v", out, err)
	}
	if got := receiveAll(t, tw); !slices.Equal(got, []string{"run-a", "run-b", "run-c"}) {
		t.Fatalf("the queue holds messages of %v after the redrives, want one of each run", got)
	}
}

// receiveAll acknowledges every message on tw's queue and returns their
// run IDs, sorted. A redriven message has lost its DedupKey.
func receiveAll(t *testing.T, tw testWorld) []string {
	t.Helper()
	var runs []string
	for {
		receive, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		d, err := tw.Receive(receive, 30*time.Second)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			slices.Sort(runs)
			return runs
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.DedupKey != "" {
			t.Errorf("redriven message of %s kept its DedupKey %q", d.RunID, d.DedupKey)
		}
		if err := tw.Ack(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, d.RunID)
	}
}

// The embedded World's queue never sets a message aside: the commands say
// so instead of listing nothing.
func TestDeadLettersOnTheLocalWorldIsAnError(t *testing.T) {
	tw := openWorlds(t)["local"](t)
	for _, args := range [][]string{{"dead-letters"}, {"redrive"}, {"redrive", "--workflow", "checkout"}} {
		out, err := cliOn(t.Context(), tw, "", args...)
		if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "the local World has no dead letters: its queue redelivers") {
			t.Errorf("%q on the local World: %v\n%s", args, err, out)
		}
	}
	for _, tc := range []struct{ args, want []string }{
		{[]string{"help", "dead-letters"}, []string{"usage: workflow dead-letters", "-limit"}},
		{[]string{"redrive", "--help"}, []string{"usage: workflow redrive", "-run", "-workflow"}},
	} {
		var out bytes.Buffer
		if err := run(t.Context(), tc.args, &out); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%q has no %q:\n%s", tc.args, want, out.String())
			}
		}
	}
	for _, args := range [][]string{{"redrive", "run-a"}, {"dead-letters", "--limit", "-1"}} {
		if _, err := cliOn(t.Context(), tw, "", args...); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
