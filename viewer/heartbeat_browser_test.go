package viewer_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/browsertest"
	"github.com/lambdaworkflow/workflow/viewer"
	"github.com/lambdaworkflow/workflow/world/local"
)

// copying reports its progress and runs until the test lets it finish.
var copyingDone = make(chan struct{})

var copying = workflow.DefineStep("viewer.copying", func(ctx context.Context, _ string) (int, error) {
	if err := workflow.Heartbeat(ctx, map[string]int{"copied": 4200}); err != nil {
		return 0, err
	}
	select {
	case <-copyingDone:
		return 4200, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
})

var copyFlow = workflow.Define("viewer.copy", func(ctx workflow.Context, key string) (int, error) {
	return copying.Call(ctx, key)
})

// A running step's last heartbeat shows on its row, with its details,
// while the page follows the run, and goes when the step completes.
func TestBrowserShowsHeartbeats(t *testing.T) {
	browser := newBrowser(t)
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{Registry: workflow.NewRegistry(copyFlow)}).Run(ctx)
	srv := httptest.NewServer(viewer.New(w))
	defer srv.Close()
	run, err := workflow.Start(ctx, workflow.NewClient(w), copyFlow, "k", workflow.WithRunID("copy-1"))
	if err != nil {
		t.Fatal(err)
	}
	const beat = `.row[data-kind="step"][data-status="running"] .heartbeat`
	if err := browsertest.Do(browser, browsertest.Navigate(srv.URL+"/run.html?id=copy-1"), browsertest.WaitVisible(beat)); err != nil {
		t.Fatalf("the page never showed the running step's heartbeat: %v", err)
	}
	shown, err := browsertest.Run(browser, browsertest.Text(beat))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, `{"copied":4200}`) {
		t.Errorf("the heartbeat shows %q, want its details", shown)
	}
	close(copyingDone)
	if _, err := run.Result(ctx); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.Do(browser, browsertest.WaitVisible(`.row[data-kind="run"][data-status="completed"]`)); err != nil {
		t.Fatalf("the page never showed the run completed: %v", err)
	}
	left, err := browsertest.Run(browser, browsertest.Evaluate[int](`document.querySelectorAll(".heartbeat").length`))
	if err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("the completed step still shows %d heartbeats", left)
	}
}
