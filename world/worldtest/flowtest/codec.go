package flowtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
	"github.com/lambdaworkflow/workflow/internal/engine"
	"github.com/lambdaworkflow/workflow/world"
)

// Payload codecs (package codec) on a World: what a sealed run stores is
// unreadable without its key and decodes with it, plain and sealed runs
// share a World and a worker, a payload moved to another run fails to
// decode, a rotated keyring starts new runs under the new key while old
// runs still decode, and a responding hook's reply is sealed too.
var codecScenarios = []struct {
	name string
	run  func(t *testing.T, w world.World)
}{
	{"SealedRunRoundTrip", sealedRunRoundTrip},
	{"PlainAndSealedRuns", plainAndSealedRuns},
	{"SealedRunWithoutKey", sealedRunWithoutKey},
	{"SealedPayloadMoved", sealedPayloadMoved},
	{"SealedKeyRotation", sealedKeyRotation},
	{"SealedReply", sealedReply},
}

// secret marks the user data of the codec scenarios: no byte of the
// World may hold it for a sealed run.
const secret = "card-4242-4242"

var confideStep = workflow.DefineStep("flowtest.louder", func(ctx context.Context, s string) (string, error) {
	w, err := workflow.Writer[string](ctx, "")
	if err != nil {
		return "", err
	}
	if err := w.Write("said " + s); err != nil {
		return "", err
	}
	return strings.ToUpper(s) + " " + strings.Repeat(s, 40), nil // long enough to compress
})

// confide passes its input through a step and a hook's message, and
// returns both.
var confide = workflow.Define("flowtest.confide", func(ctx workflow.Context, in [2]string) (string, error) {
	loud, err := confideStep.Call(ctx, in[1])
	if err != nil {
		return "", err
	}
	msg, err := workflow.CreateHook[string](ctx, workflow.WithToken(in[0])).Receive(ctx)
	if err != nil {
		return "", err
	}
	return loud[:len(secret)] + "/" + msg, nil
})

// newKeyring returns a keyring of fresh keys, the first current.
func newKeyring(t *testing.T, ids ...string) map[string][]byte {
	t.Helper()
	keys := map[string][]byte{}
	for _, id := range ids {
		keys[id] = []byte(rand.Text()[:26] + "012345")
	}
	return keys
}

func chainOf(t *testing.T, current string, keys map[string][]byte) *codec.Chain {
	t.Helper()
	kr, err := codec.NewKeyring(current, keys)
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: kr})
}

// newCodecEnv is newEnv with the chain on the worker and the client.
func newCodecEnv(t *testing.T, w world.World, c *codec.Chain) *env {
	e := newEnvWith(t, w, workflow.WorkerOptions{Codec: c}, nil)
	e.client = workflow.NewClient(w, workflow.WithPayloadCodec(c))
	return e
}

// confideOnce runs confide to its end on e and returns the run.
func confideOnce(t *testing.T, e *env, client *workflow.Client) *workflow.Run[string] {
	t.Helper()
	token := unique("confide")
	run, err := workflow.Start(e.ctx, client, confide, [2]string{token, secret})
	if err != nil {
		t.Fatal(err)
	}
	waitForHook(t, e, token)
	if err := workflow.ResumeHook(e.ctx, client, token, "pin "+secret); err != nil {
		t.Fatal(err)
	}
	if got, want := result(t, e, run), strings.ToUpper(secret)+"/pin "+secret; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	reader, err := workflow.GetRun[string](e.ctx, client, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for v, err := range workflow.ReadStream[string](e.ctx, reader, "", 0) {
		if err != nil || v != "said "+secret {
			t.Fatalf("stream: %q, %v", v, err)
		}
	}
	return run
}

// stored returns every byte the World holds of a run's log and entity.
func stored(t *testing.T, e *env, runID string) []byte {
	t.Helper()
	run, err := e.world.GetRun(e.ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := e.world.Events(e.ctx, runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]byte{}, run.Input...), run.Output...)
	for _, ev := range evs {
		all = append(all, ev.Payload...)
	}
	chunks, _, err := e.world.ReadStream(e.ctx, engine.RunStream(runID, ""), 0)
	if err != nil || len(chunks) != 1 {
		t.Fatalf("the run's stream holds %d chunks (%v), want 1", len(chunks), err)
	}
	return append(all, chunks[0]...)
}

func sealedRunRoundTrip(t *testing.T, w world.World) {
	e := newCodecEnv(t, w, chainOf(t, "k1", newKeyring(t, "k1")))
	run := confideOnce(t, e, e.client)
	raw := stored(t, e, run.ID)
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(bytes.ToUpper(raw), []byte(strings.ToUpper(secret))) {
		t.Fatalf("the World holds the run's data in the clear: %s", raw)
	}
	if !bytes.Contains(raw, []byte(`"$sealed"`)) {
		t.Fatalf("nothing sealed in %s", raw)
	}
	attrs, err := run.Attributes(e.ctx)
	if err != nil || !strings.HasPrefix(attrs["$codec"], "v1 local k1 ") {
		t.Fatalf("$codec attribute %q (%v)", attrs["$codec"], err)
	}
}

func plainAndSealedRuns(t *testing.T, w world.World) {
	e := newCodecEnv(t, w, chainOf(t, "k1", newKeyring(t, "k1")))
	plain := confideOnce(t, e, workflow.NewClient(e.world, workflow.WithPayloadCodec(nil))) // started by a client without codecs
	sealed := confideOnce(t, e, e.client)
	if !bytes.Contains(stored(t, e, plain.ID), []byte(secret)) {
		t.Fatal("the plain run's data is not stored as it is")
	}
	if bytes.Contains(stored(t, e, sealed.ID), []byte(secret)) {
		t.Fatal("the sealed run's data is stored in the clear")
	}
}

func sealedRunWithoutKey(t *testing.T, w world.World) {
	e := newCodecEnv(t, w, chainOf(t, "k1", newKeyring(t, "k1")))
	run := confideOnce(t, e, e.client)
	for name, c := range map[string]*codec.Chain{
		"no codecs":     nil,
		"another key":   chainOf(t, "k1", newKeyring(t, "k1")),
		"other key IDs": chainOf(t, "k2", newKeyring(t, "k2")),
	} {
		other, err := workflow.GetRun[string](e.ctx, workflow.NewClient(e.world, workflow.WithPayloadCodec(c)), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		out, err := other.Result(e.ctx)
		var nokey *codec.NoKeyError
		if !errors.As(err, &nokey) || !strings.Contains(err.Error(), "payload is encrypted; no key for run "+run.ID) {
			t.Errorf("%s: Result = %q, %v; want a NoKeyError", name, out, err)
		}
	}
}

// sealedPayloadMoved ends a waiting run with the sealed output of
// another: its reader must refuse it, not return the other run's result.
func sealedPayloadMoved(t *testing.T, w world.World) {
	e := newCodecEnv(t, w, chainOf(t, "k1", newKeyring(t, "k1")))
	done := confideOnce(t, e, e.client)
	token := unique("confide")
	victim := start(t, e, confide, [2]string{token, "x"})
	waitForHook(t, e, token)
	doneRun, err := e.world.GetRun(e.ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The worker may still be writing after the hook appears (its
	// suspension, the lease's release): append after whatever it wrote.
	ev := world.Event{Type: world.RunCompleted, Payload: []byte(`{}`)}
	for tries := 0; ; tries++ {
		cur, err := e.world.GetRun(e.ctx, victim.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.world.AppendEvents(e.ctx, victim.ID, cur.LastSlot+1, []world.Event{ev},
			&world.RunUpdate{Status: world.StatusCompleted, Output: doneRun.Output})
		if err == nil {
			break
		}
		if !errors.Is(err, world.ErrSlotTaken) || tries == 10 {
			t.Fatal(err)
		}
	}
	if out, err := victim.Result(e.ctx); !errors.Is(err, codec.ErrTampered) {
		t.Fatalf("Result of a run given another's output = %q, %v; want ErrTampered", out, err)
	}
}

func sealedKeyRotation(t *testing.T, w world.World) {
	keys := newKeyring(t, "old", "new")
	before := newCodecEnv(t, w, chainOf(t, "old", keys))
	oldRun := confideOnce(t, before, before.client)
	after := newCodecEnv(t, w, chainOf(t, "new", keys)) // rotated: old stays for old runs
	newRun := confideOnce(t, after, after.client)
	for run, id := range map[*workflow.Run[string]]string{oldRun: "old", newRun: "new"} {
		attrs, err := run.Attributes(after.ctx)
		if err != nil || !strings.HasPrefix(attrs["$codec"], "v1 local "+id+" ") {
			t.Errorf("run %s: $codec %q, want key %s", run.ID, attrs["$codec"], id)
		}
	}
	rotatedOnly := workflow.NewClient(w, workflow.WithPayloadCodec(chainOf(t, "new", map[string][]byte{"new": keys["new"]})))
	old, err := workflow.GetRun[string](after.ctx, rotatedOnly, oldRun.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Result(after.ctx); !strings.Contains(fmtErr(err), `no key for run `+oldRun.ID+` (local old)`) {
		t.Fatalf("a keyring without the old key read the old run: %v", err)
	}
	reread, err := workflow.GetRun[string](after.ctx, after.client, oldRun.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := result(t, after, reread); !strings.HasSuffix(got, "/pin "+secret) {
		t.Fatalf("old run after rotation: %q", got)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// sealedReply: a responding hook's reply, its head and a streamed reply's
// items, is sealed on its reply stream with the run's key, and its
// caller reads it.
func sealedReply(t *testing.T, w world.World) {
	e := newCodecEnv(t, w, chainOf(t, "k1", newKeyring(t, "k1")))
	for _, c := range []struct {
		wf   *workflow.Workflow[string, struct{}]
		read func(token string) (string, error)
	}{
		{speller, func(token string) (string, error) {
			letters, err := workflow.ResumeRespondingHook[string, workflow.Stream[string]](e.ctx, e.client, token, secret)
			var got strings.Builder
			for l, err := range letters.All(e.ctx) {
				if err != nil {
					return got.String(), err
				}
				got.WriteString(l)
			}
			return got.String(), err
		}},
		{echoOnce, func(token string) (string, error) {
			return workflow.ResumeRespondingHook[string, string](e.ctx, e.client, token, secret)
		}},
	} {
		token := unique("sealed-reply")
		run := start(t, e, c.wf, token)
		waitForHook(t, e, token)
		if got, err := c.read(token); err != nil || !strings.HasSuffix(got, secret) {
			t.Fatalf("%s's reply: %q, %v", c.wf.Name(), got, err)
		}
		result(t, e, run)
		chunks := replyChunks(t, e, run.ID)
		raw := bytes.Join(chunks, nil)
		if bytes.Contains(raw, []byte(secret[:6])) || bytes.Contains(raw, []byte(`"item":"`)) || !bytes.Contains(raw, []byte(`"$sealed"`)) {
			t.Fatalf("%s's reply stream holds its reply in the clear: %s", c.wf.Name(), raw)
		}
	}
}

// echoOnce answers one message of its responding hook with its text, in
// the reply's head (speller answers rune by rune, in its items).
var echoOnce = workflow.Define("flowtest.echo-once", func(ctx workflow.Context, token string) (struct{}, error) {
	m, err := echoes.Create(ctx, workflow.WithToken(token)).Receive(ctx)
	if err != nil {
		return struct{}{}, err
	}
	_, err = echo.Call(ctx, m)
	return struct{}{}, err
})

// replyChunks returns the chunks of the reply streams of a run's resumes.
func replyChunks(t *testing.T, e *env, runID string) [][]byte {
	t.Helper()
	evs, err := e.world.Events(e.ctx, runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var all [][]byte
	for _, ev := range evs {
		var p struct {
			ResumeID string `json:"resumeId"`
		}
		if ev.Type != world.HookReceived || json.Unmarshal(ev.Payload, &p) != nil || p.ResumeID == "" {
			continue
		}
		chunks, _, err := e.world.ReadStream(e.ctx, engine.ReplyStream(p.ResumeID), 0)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, chunks...)
	}
	if len(all) == 0 {
		t.Fatal("no reply stream found in the run's log")
	}
	return all
}
