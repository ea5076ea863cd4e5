package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest/fakeprovider"
	"github.com/lambdaworkflow/workflow/world/local"
)

// The answers of the crash test's model: calls 1 to 4 each ask for the
// slow tool, call 5 says it is done.
const crashCalls = 5

// TestKillNineMidLoopBillsEachModelCallOnce runs an agent loop in a real
// process (internal/agentcrash: the embedded World, Bedrock's SDK client
// against the fake provider, which counts billed answers) and SIGKILLs
// it twice: while a tool runs after model call 2, and while model call 4
// is being answered. Restarted each time, the run finishes. What the
// design guarantees, and the test asserts: a model call whose result was
// recorded is never sent again, so calls 1, 2, 3 and 5 are billed once
// each; the call in flight at a kill has no recorded result and is sent
// again, so call 4 is billed twice. A kill between a model call and its
// tools bills nothing again.
func TestKillNineMidLoopBillsEachModelCallOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	srv := fakeprovider.Start(t, fakeprovider.EventStream)
	inFlight, release := make(chan struct{}), make(chan struct{})
	held := false
	srv.Answer(func(req fakeprovider.Request) fakeprovider.Reply {
		call := conversedCall(t, req.Body)
		if call == 4 && !held {
			held = true // only the first request for call 4 hangs until the kill
			close(inFlight)
			<-release
		}
		if call >= crashCalls {
			return fakeprovider.MustLoad("bedrock/testdata/text.sse")
		}
		return toolUseReply(call)
	})

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "agentcrash")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/agentcrash").CombinedOutput(); err != nil {
		t.Fatalf("building the worker: %v\n%s", err, out)
	}
	data, journal := filepath.Join(tmp, "data"), filepath.Join(tmp, "journal")
	serve := func(extra ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"-dir", data, "-journal", journal, "-endpoint", srv.URL}, extra...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	kill := func(cmd *exec.Cmd) {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	}
	read := func() string { b, _ := os.ReadFile(journal); return string(b) }

	first := serve("-start")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(read(), "tool start 2\n"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool after call 2 never started:\n%s", read())
		}
	}
	kill(first) // mid-tool
	second := serve()
	select {
	case <-inFlight:
	case <-time.After(60 * time.Second):
		t.Fatalf("call 4 never reached the provider:\n%s", read())
	}
	kill(second) // mid-model-call
	close(release)
	third := serve()
	defer kill(third)

	w, err := local.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	run, err := workflow.GetRun[*agent.Result](ctx, workflow.NewClient(w), "billing")
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "It is sunny in Paris and rainy in Rome." || len(res.Responses) != crashCalls {
		t.Fatalf("result %q after %d model calls", res.Text, len(res.Responses))
	}

	billed := map[int]int{}
	for _, req := range srv.Requests() {
		billed[conversedCall(t, req.Body)]++
	}
	want := map[int]int{1: 1, 2: 1, 3: 1, 4: 2, 5: 1}
	if fmt.Sprint(billed) != fmt.Sprint(want) || srv.Billed() != 6 {
		t.Fatalf("billed per model call %v (%d in all), want %v", billed, srv.Billed(), want)
	}
	if n := strings.Count(read(), "tool start 2\n"); n != 2 {
		t.Errorf("the tool the first kill interrupted started %d times, want 2", n)
	}
	t.Logf("requests per model call %v, %d billed for %d calls across two kills", billed, srv.Billed(), crashCalls)
}

// conversedCall is which model call of the run a Converse request is:
// one more than the assistant turns it carries.
func conversedCall(t *testing.T, body []byte) int {
	var req struct{ Messages []struct{ Role string } }
	if err := json.Unmarshal(body, &req); err != nil {
		t.Errorf("a request the fake provider cannot read: %v", err)
	}
	n := 1
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// toolUseReply is a ConverseStream answer that calls the slow tool with n.
func toolUseReply(n int) fakeprovider.Reply {
	ev := func(typ, data string, args ...any) fakeprovider.Event {
		return fakeprovider.Event{Type: typ, Data: fmt.Sprintf(data, args...)}
	}
	return fakeprovider.Reply{Events: []fakeprovider.Event{
		ev("messageStart", `{"role":"assistant"}`),
		ev("contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"name":"slow","toolUseId":"tooluse_%d"}}}`, n),
		ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"N\": %d}"}}}`, n),
		ev("contentBlockStop", `{"contentBlockIndex":0}`),
		ev("messageStop", `{"stopReason":"tool_use"}`),
		ev("metadata", `{"metrics":{"latencyMs":100},"usage":{"inputTokens":100,"outputTokens":20,"totalTokens":120}}`),
	}}
}
