package chat_test

import (
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/agent/chat"
)

// Behind a streaming Function URL (lambdaurl, as Lambda runs it), the
// handler answers with the run's ID in a header and the turn's parts
// while the model is still answering.
func TestHandlerStreamsBehindAFunctionURL(t *testing.T) {
	c, _ := serve(t, worlds["memory"](t))
	_, release := script(agenttest.Answer("from lambda"))
	defer release()
	fn := lambdaurl.Wrap(sessions.Handler(c, "/sessions"))
	resp, err := fn(t.Context(), &events.LambdaFunctionURLRequest{
		RawPath: "/sessions",
		Headers: map[string]string{"content-type": "application/json", "accept": chat.ContentTypeNDJSON},
		Body:    userTurn("hi"),
		RequestContext: events.LambdaFunctionURLRequestContext{DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/sessions"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Headers[chat.RunIDHeader]
	if resp.StatusCode != http.StatusOK || id == "" || resp.Headers["Content-Type"] != chat.ContentTypeNDJSON {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Headers)
	}
	waitMidTurn(t)
	var got []agent.Part
	for f, err := range readNDJSON(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		if f.End != "" || f.Error != "" {
			t.Logf("end %+v", f)
			break
		}
		if got = append(got, f.Part); len(got) == 2 {
			release() // two parts arrived while the model was held mid-answer
		}
	}
	if agent.Text(got) != "from lambda" {
		t.Fatalf("parts %+v", got)
	}
	if err := sessions.Send(t.Context(), c, id, chat.Message{End: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := must(workflow.GetRun[*agent.Result](t.Context(), c, id)).Result(t.Context()); err != nil {
		t.Fatal(err)
	}
}
