package lambdaapp

import (
	"flag"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world"
)

// testdata holds the logs of orders recorded with this code, in the form
// workflow inspect run ID --json exports: one approved, one declined, and
// one still waiting for its approval, as a run in flight during a deploy
// is. Every test run replays them, so a change to ProcessOrder that would
// break such runs fails here. go test -run TestOrderLogs -update
// re-records them; do that only for a new scenario, never to make a
// failing replay pass.

var update = flag.Bool("update", false, "re-record the order logs in testdata")

func TestOrderLogs(t *testing.T) {
	if *update {
		recordOrderLogs(t)
	}
	for _, name := range []string{"order-approved", "order-declined", "order-awaiting-approval"} {
		t.Run(name, func(t *testing.T) {
			workflowtest.ReplayFile(t, filepath.Join("testdata", name+".json"))
		})
	}
}

func recordOrderLogs(t *testing.T) {
	a := newApp(t)
	save := func(name, orderID string) {
		events, err := a.c.World().Events(a.ctx, RunID(orderID), 0)
		if err != nil {
			t.Fatal(err)
		}
		workflowtest.SaveLog(t, filepath.Join("testdata", name+".json"), events)
	}
	for _, id := range []string{"g1", "g2", "g3"} {
		a.call("POST /orders", "", `{"id": "`+id+`", "items": [{"sku": "tea", "quantity": 2, "unitCents": 450}]}`)
	}
	a.confirm(a.webhookOf("g1"), `{"accept": true, "name": "Ada"}`)
	if code, body := a.call("POST /orders/{id}/approval", "g1", `{"approve": true, "approver": "Grace"}`); code != http.StatusOK {
		t.Fatalf("approval: %d %s", code, body)
	}
	a.confirm(a.webhookOf("g2"), `{"accept": false, "name": "Ada"}`)
	a.confirm(a.webhookOf("g3"), `{"accept": true, "name": "Lin"}`)
	for _, r := range []struct{ name, id string }{{"order-approved", "g1"}, {"order-declined", "g2"}} {
		run, err := workflow.GetRun[Receipt](a.ctx, a.c, RunID(r.id))
		if err == nil {
			_, err = run.Result(a.ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		save(r.name, r.id)
	}
	// Once the webhook is disposed, the run waits on the approval hook.
	for !slices.ContainsFunc(must(a.c.World().Events(a.ctx, RunID("g3"), 0)), func(ev world.Event) bool { return ev.Type == world.HookDisposed }) {
		time.Sleep(5 * time.Millisecond)
	}
	save("order-awaiting-approval", "g3")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
