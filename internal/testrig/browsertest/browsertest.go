// Package browsertest starts a real headless Chromium for the tests that
// drive a page (the run viewer's, the chat stream's EventSource), over the
// DevTools protocol with chromedp. Only tests import it, so chromedp is in
// no user's build.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium finds the browser, or skips the test saying why there is none
// (fails it under WORKFLOW_REQUIRE_CHROMIUM=1, as CI sets).
func Chromium(t *testing.T) string {
	for _, path := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if path == "" {
			continue
		}
		if _, err := exec.LookPath(path); err == nil {
			return path
		}
	}
	if os.Getenv("WORKFLOW_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no Chromium, and WORKFLOW_REQUIRE_CHROMIUM=1 (CI: .ci/run installs it with apt-get install chromium)")
	}
	t.Skip("no Chromium found (apt-get install chromium, or set CHROMIUM to its path)")
	return ""
}

// New starts a headless browser for the test and returns its context;
// the browser stops when the test ends.
func New(t *testing.T) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 800),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	return ctx
}
