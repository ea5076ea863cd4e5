package viewer_test

import (
	"context"
	"errors"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/internal/testrig/browsertest"
	"github.com/lambdaworkflow/workflow/viewer"
	"github.com/lambdaworkflow/workflow/world/local"
)

var screenshotDir = flag.String("out", "", "directory for the browser test's screenshot (default: the test's temporary directory)")

var flakyCalls atomic.Int32

// flakyCharge fails its first attempt, so the timeline has a retry.
var flakyCharge = workflow.DefineStep("viewer.charge", func(ctx context.Context, order string) (string, error) {
	if flakyCalls.Add(1) == 1 {
		return "", errors.New("card network timed out")
	}
	return "charged " + order, nil
}, workflow.WithBackoff(func(int) time.Duration { return 300 * time.Millisecond }))

var approvalFlow = workflow.Define("viewer.approval", func(ctx workflow.Context, order string) (string, error) {
	receipt, err := flakyCharge.Call(ctx, order)
	if err != nil {
		return "", err
	}
	workflow.Sleep(ctx, 500*time.Millisecond)
	approved, err := workflow.CreateHook[string](ctx, workflow.WithToken("approve:"+order)).Receive(ctx)
	if err != nil {
		return "", err
	}
	return receipt + ", " + approved, nil
})

// newBrowser starts the headless Chromium the page tests drive.
func newBrowser(t *testing.T) *browsertest.Browser { return browsertest.New(t) }

// A run that retries a step, sleeps and waits on a hook, watched live in
// a real browser from its first step to its end.
func TestBrowserFollowsARun(t *testing.T) {
	browser := newBrowser(t)
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{Registry: workflow.NewRegistry(approvalFlow)})
	go worker.Run(ctx)
	srv := httptest.NewServer(viewer.New(w))
	defer srv.Close()

	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, approvalFlow, "order-7", workflow.WithRunID("order-7"),
		workflow.WithAttributes(map[string]string{"customer": `<img src=x onerror="document.title='xss'">`}))
	if err != nil {
		t.Fatal(err)
	}
	// The page is opened while the run still moves; it must show the hook
	// waiting without a reload.
	if err := browsertest.Do(browser,
		browsertest.Navigate(srv.URL+"/run.html?id=order-7"),
		browsertest.WaitVisible(`.row[data-kind="hook"][data-status="waiting"]`),
	); err != nil {
		t.Fatalf("the page never showed the hook waiting: %v", err)
	}
	if err := workflow.ResumeHook(ctx, c, "approve:order-7", "approved by ops"); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.Do(browser,
		browsertest.WaitVisible(`.row[data-kind="run"][data-status="completed"]`),
	); err != nil {
		t.Fatalf("the page never showed the run completed: %v", err)
	}
	rowsBy := func(field string) string {
		v, err := browsertest.Run(browser, browsertest.Evaluate[string](`[...document.querySelectorAll(".row:not(.axis)")].map(r => r.dataset.`+field+`).join(",")`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	kinds, statuses, spans := rowsBy("kind"), rowsBy("status"), rowsBy("spans")
	// A failed attempt lasts less than a pixel here: click it by script.
	if _, err := browsertest.Run(browser, browsertest.Evaluate[bool](`document.querySelector('.row[data-kind="step"] .bar-failed').click(), true`)); err != nil {
		t.Fatal(err)
	}
	detail, err := browsertest.Run(browser, browsertest.Text(`#detail`))
	if err != nil {
		t.Fatal(err)
	}
	title, err := browsertest.Run(browser, browsertest.Title())
	if err != nil {
		t.Fatal(err)
	}
	png, err := browsertest.Run(browser, browsertest.FullScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if kinds != "run,step,wait,hook" || statuses != "completed,completed,completed,received" {
		t.Errorf("timeline rows: kinds %s, statuses %s", kinds, statuses)
	}
	// The step: a failed attempt, its backoff, the attempt that succeeded.
	if spans != "1,3,1,1" {
		t.Errorf("spans per row %s, want the step's to be attempt, backoff, attempt", spans)
	}
	if !strings.Contains(detail, "attempt 1") || !strings.Contains(detail, "card network timed out") {
		t.Errorf("the failed attempt's detail does not show its error:\n%s", detail)
	}
	injected, err := browsertest.Run(browser, browsertest.Evaluate[int](`document.querySelectorAll("main img").length`))
	if err != nil {
		t.Fatal(err)
	}
	if title == "xss" || injected > 0 {
		t.Error("an attribute's markup ran in the page")
	}
	if out, err := run.Result(ctx); err != nil || out != "charged order-7, approved by ops" {
		t.Errorf("run result %q, %v", out, err)
	}
	dir := *screenshotDir
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "viewer.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d KB)", path, len(png)/1024)
}
