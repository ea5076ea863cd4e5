// Package browsertest starts a real headless Chromium for the tests that
// drive a page (the run viewer's, the chat stream's EventSource, the
// approval link's), and drives it over the DevTools protocol on the
// websocket client the AWS World already uses. It speaks the handful of
// protocol methods those tests need, rather than link a DevTools client
// library whose dependencies would reach every module that holds such a
// test, and through them the graph of every user of that module.
package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
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

// Browser is one page of a headless Chromium.
type Browser struct {
	ctx  context.Context
	conn *websocket.Conn

	mu      sync.Mutex
	lastID  int64
	waiting map[int64]chan response
	broken  error // why the connection ended, once it has
}

// New starts a headless browser for the test, with one blank page; the
// browser closes when the test ends.
func New(t *testing.T) *Browser {
	// Not the test's context: that ends before the cleanups run, and a
	// browser killed then leaves its helper processes writing to its
	// profile while the test removes the directory.
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Chromium(t),
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--window-size=1200,800",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	b := &Browser{ctx: ctx, waiting: map[int64]chan response{}}
	t.Cleanup(func() {
		defer cancel()
		if b.conn != nil {
			_ = b.call("Browser.close", nil, nil) // an orderly exit stops its helpers first
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			select { // a helper that outlives it may hold the output open
			case <-exited:
			case <-time.After(5 * time.Second):
			}
		}
	})
	endpoint, err := devToolsEndpoint(stderr)
	go func() {
		_, _ = io.Copy(io.Discard, stderr) // a full pipe would stall the browser
		_ = cmd.Wait()
		close(exited)
	}()
	if err != nil {
		t.Fatal(err)
	}
	page, err := pageSocket(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	b.conn, _, err = websocket.Dial(ctx, page, nil)
	if err != nil {
		t.Fatalf("connecting to the page: %v", err)
	}
	b.conn.SetReadLimit(-1) // a full-page screenshot is one message
	go b.read()
	return b
}

// devToolsEndpoint reads the browser's first lines of output up to the one
// naming its DevTools endpoint (the port it chose), and returns its
// host:port.
func devToolsEndpoint(stderr io.Reader) (string, error) {
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if ws, ok := strings.CutPrefix(lines.Text(), "DevTools listening on "); ok {
			u, err := url.Parse(ws)
			if err != nil {
				return "", err
			}
			return u.Host, nil
		}
	}
	if err := lines.Err(); err != nil {
		return "", fmt.Errorf("reading the browser's output: %w", err)
	}
	return "", errors.New("the browser exited before naming its DevTools endpoint")
}

// pageSocket returns the websocket URL of the browser's page.
func pageSocket(ctx context.Context, endpoint string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+endpoint+"/json/list", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var targets []struct{ Type, WebSocketDebuggerURL string }
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return "", err
	}
	for _, t := range targets {
		if t.Type == "page" {
			return t.WebSocketDebuggerURL, nil
		}
	}
	return "", errors.New("the browser has no page")
}

type response struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// read hands each response to its caller; events, which no test waits
// for, are dropped.
func (b *Browser) read() {
	for {
		_, data, err := b.conn.Read(b.ctx)
		if err != nil {
			b.mu.Lock()
			b.broken = fmt.Errorf("the connection to the browser ended: %w", err)
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		var r response
		if json.Unmarshal(data, &r) != nil || r.ID == 0 {
			continue
		}
		b.mu.Lock()
		ch := b.waiting[r.ID]
		delete(b.waiting, r.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// call sends a DevTools method with its params and decodes its result
// into result (unless nil).
func (b *Browser) call(method string, params, result any) error {
	ch := make(chan response, 1)
	b.mu.Lock()
	if b.broken != nil {
		b.mu.Unlock()
		return b.broken
	}
	b.lastID++
	id := b.lastID
	b.waiting[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{id, method, params})
	if err != nil {
		return err
	}
	if err := b.conn.Write(b.ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	r, ok := <-ch
	switch {
	case !ok:
		b.mu.Lock()
		defer b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, b.broken)
	case r.Error != nil:
		return fmt.Errorf("%s: %s", method, r.Error.Message)
	case result != nil:
		return json.Unmarshal(r.Result, result)
	}
	return nil
}

// evaluate runs a JavaScript expression in the page, awaits it if it is a
// promise, and decodes its value into result (unless nil).
func (b *Browser) evaluate(expr string, result any) error {
	var out struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &out)
	switch {
	case err != nil:
		return err
	case out.ExceptionDetails != nil:
		return fmt.Errorf("%s: %s %s", expr, out.ExceptionDetails.Text, out.ExceptionDetails.Exception.Description)
	case result == nil:
		return nil
	case out.Result.Type == "undefined":
		return fmt.Errorf("%s is undefined", expr)
	}
	return json.Unmarshal(out.Result.Value, result)
}

// until evaluates a boolean expression until it is true, for as long as
// the test runs.
func (b *Browser) until(expr string) error {
	for {
		var ok bool
		if err := b.evaluate(expr, &ok); err != nil || ok {
			return err
		}
		select {
		case <-b.ctx.Done():
			return fmt.Errorf("waiting for %s: %w", expr, b.ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// element is a JavaScript expression for the first element sel matches:
// an XPath expression if it starts with a slash, else a CSS selector.
func element(sel string) string {
	quoted, _ := json.Marshal(sel)
	if strings.HasPrefix(sel, "/") {
		return fmt.Sprintf("document.evaluate(%s, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue", quoted)
	}
	return fmt.Sprintf("document.querySelector(%s)", quoted)
}

// visible is a JavaScript expression true once sel's element is laid out
// with a size and not hidden.
func visible(sel string) string {
	return fmt.Sprintf(`(e => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden")(%s)`, element(sel))
}

// An Action is a step of a browser session.
type Action func(b *Browser) error

// A Query is a step of a browser session that reads a value.
type Query[T any] func(b *Browser) (T, error)

// Do runs the actions in order, up to the first that fails.
func Do(b *Browser, actions ...Action) error {
	for _, a := range actions {
		if err := a(b); err != nil {
			return err
		}
	}
	return nil
}

// Run runs a query.
func Run[T any](b *Browser, q Query[T]) (T, error) { return q(b) }

// Navigate loads u in the page and waits until its document has loaded.
func Navigate(u string) Action {
	return func(b *Browser) error {
		// The old document's window carries a mark the new one lacks.
		if err := b.evaluate("window.browsertestLeaving = true", nil); err != nil {
			return err
		}
		var nav struct{ ErrorText string }
		if err := b.call("Page.navigate", map[string]string{"url": u}, &nav); err != nil {
			return err
		}
		if nav.ErrorText != "" {
			return fmt.Errorf("navigating to %s: %s", u, nav.ErrorText)
		}
		return b.until(`!window.browsertestLeaving && document.readyState === "complete"`)
	}
}

// WaitVisible waits until sel's element is shown.
func WaitVisible(sel string) Action {
	return func(b *Browser) error { return b.until(visible(sel)) }
}

// Click waits until sel's element is shown and clicks its centre with the
// mouse, as a person does.
func Click(sel string) Action {
	return func(b *Browser) error {
		if err := b.until(visible(sel)); err != nil {
			return err
		}
		var at struct{ X, Y float64 }
		centre := fmt.Sprintf(`(e => { e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return {x: r.x + r.width/2, y: r.y + r.height/2}; })(%s)`, element(sel))
		if err := b.evaluate(centre, &at); err != nil {
			return err
		}
		for _, event := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
			if err := b.call("Input.dispatchMouseEvent", map[string]any{"type": event, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1}, nil); err != nil {
				return err
			}
		}
		return nil
	}
}

// SetValue waits for sel's element and sets its value.
func SetValue(sel, value string) Action {
	return func(b *Browser) error {
		if err := b.until(element(sel) + " !== null"); err != nil {
			return err
		}
		quoted, _ := json.Marshal(value)
		return b.evaluate(fmt.Sprintf("(%s).value = %s", element(sel), quoted), nil)
	}
}

// Text waits for sel's element and reads its rendered text.
func Text(sel string) Query[string] {
	return func(b *Browser) (string, error) {
		if err := b.until(element(sel) + " !== null"); err != nil {
			return "", err
		}
		var text string
		err := b.evaluate("("+element(sel)+").innerText", &text)
		return text, err
	}
}

// Title reads the page's title.
func Title() Query[string] {
	return func(b *Browser) (string, error) {
		var title string
		err := b.evaluate("document.title", &title)
		return title, err
	}
}

// Evaluate reads the value of a JavaScript expression.
func Evaluate[T any](expr string) Query[T] {
	return func(b *Browser) (T, error) {
		var v T
		err := b.evaluate(expr, &v)
		return v, err
	}
}

// Poll evaluates a JavaScript expression until its value is truthy, and
// reads that value.
func Poll[T any](expr string) Query[T] {
	return func(b *Browser) (T, error) {
		var v T
		if err := b.until("!!(" + expr + ")"); err != nil {
			return v, err
		}
		err := b.evaluate(expr, &v)
		return v, err
	}
}

// FullScreenshot captures the whole page, beyond the window, as a PNG.
func FullScreenshot() Query[[]byte] {
	return func(b *Browser) ([]byte, error) {
		var metrics struct {
			CSSContentSize struct{ Width, Height float64 } `json:"cssContentSize"`
		}
		if err := b.call("Page.getLayoutMetrics", nil, &metrics); err != nil {
			return nil, err
		}
		size := metrics.CSSContentSize
		var shot struct{ Data []byte } // base64 in JSON, which encoding/json decodes into []byte
		err := b.call("Page.captureScreenshot", map[string]any{
			"format":                "png",
			"captureBeyondViewport": true,
			"clip":                  map[string]float64{"x": 0, "y": 0, "width": size.Width, "height": size.Height, "scale": 1},
		}, &shot)
		return shot.Data, err
	}
}
