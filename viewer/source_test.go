package viewer_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow/internal/dynsource"
	"github.com/lambdaworkflow/workflow/internal/testrig/browsertest"
	"github.com/lambdaworkflow/workflow/viewer"
	"github.com/lambdaworkflow/workflow/world"
)

// sourceCode carries markup, which the page must show as text.
const sourceCode = "def workflow(input):\n    return steps.tag(\"<img src=x onerror=\\\"document.title='xss'\\\">\")\n"

func dynamicRun(t *testing.T) (world.World, *httptest.Server) {
	w := newWorld(t)
	name, input := dynsource.Source{Code: sourceCode, Steps: map[string]string{"tag": "orders.tag"}}.Store([]byte(`{"order":7}`))
	r := world.Run{ID: "dyn-1", Workflow: name, Status: world.StatusRunning, Input: input, CreatedAt: time.Now()}
	if _, err := w.CreateRun(t.Context(), r, []world.Event{{Type: world.RunCreated, Payload: []byte(`{"workflow":"` + name + `"}`)}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(viewer.New(w))
	t.Cleanup(srv.Close)
	return w, srv
}

// The run API gives a dynamic run's stored code apart from the input its
// code was called with.
func TestTheAPIGivesADynamicRunsSource(t *testing.T) {
	_, srv := dynamicRun(t)
	resp, err := http.Get(srv.URL + "/api/run?id=dyn-1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Run struct {
			Input  json.RawMessage
			Source dynsource.Source
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Run.Source.Code != sourceCode || got.Run.Source.SHA256 != dynsource.Hash(sourceCode) || string(got.Run.Input) != `{"order":7}` {
		t.Errorf("the API gave source %+v and input %s", got.Run.Source, got.Run.Input)
	}
}

// The run page shows the code under "Workflow code", numbered, as text.
func TestBrowserShowsADynamicRunsSource(t *testing.T) {
	browser := newBrowser(t)
	_, srv := dynamicRun(t)
	if err := browsertest.Do(browser, browsertest.Navigate(srv.URL+"/run.html?id=dyn-1"), browsertest.WaitVisible(`#source pre`)); err != nil {
		t.Fatalf("the page never showed the source: %v", err)
	}
	text, err := browsertest.Run(browser, browsertest.Text(`#source`))
	if err != nil {
		t.Fatal(err)
	}
	title, err := browsertest.Run(browser, browsertest.Title())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Workflow code") || !strings.Contains(text, "   2      return steps.tag(\"<img") || !strings.Contains(text, "steps: tag=orders.tag") {
		t.Errorf("the source section reads:\n%s", text)
	}
	if strings.Contains(title, "xss") {
		t.Error("markup in the source ran")
	}
}
