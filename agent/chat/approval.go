package chat

import (
	"errors"
	"net/http"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
)

// ApprovalHandler serves the decisions on tool calls that need one
// (agent.NeedsApproval) under path (say "/approvals"):
//
//	POST {path}/{toolCallId}    body agent.Approval: 202, or 404 if no call waits under that ID
//
// A UI finds the ID in the stream's tool-call part (needsApproval set).
// The part can reach the stream before the run waits on the call's hook,
// so a decision for an ID not yet waiting is held for up to 10 s before
// the 404.
// Without [WithCaller] the route decides for whoever knows the ID: put it
// behind the application's authentication and check that the caller may
// decide. With it, a caller decides only the calls of the runs it started
// through a handler with the same WithCaller: another caller's call is
// answered 404, as an unknown call is.
func ApprovalHandler(c *workflow.Client, path string, opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{maxBody: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&cfg)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+routePath(path)+"/{call}", func(w http.ResponseWriter, r *http.Request) {
		var a agent.Approval
		err := decodeBody(w, r, cfg.maxBody, &a)
		if err == nil {
			call := r.PathValue("call")
			approve := func() error {
				if err := cfg.ownsHook(r, c, call); err != nil {
					return err
				}
				return agent.Approve(r.Context(), c, call, a)
			}
			err = untilHookExists(r.Context(), approve, func(error) error { return nil })
		}
		switch {
		case errors.Is(err, workflow.ErrHookNotFound), errors.Is(err, errOtherCaller):
			writeError(w, &httpError{http.StatusNotFound, "no tool call waits for a decision under " + r.PathValue("call")})
		case errors.Is(err, workflow.ErrInvalidPayload):
			writeError(w, badRequest("%v", err))
		case err != nil:
			writeError(w, err)
		default:
			writeJSON(w, http.StatusAccepted, map[string]string{"toolCallId": r.PathValue("call")})
		}
	})
	return mux
}
