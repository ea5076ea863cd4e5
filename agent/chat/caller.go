package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// CallerAttribute is the run attribute that binds a run started through a
// handler with [WithCaller] to its caller: a hash of the caller's
// identity, not the identity itself, since attributes are stored in the
// clear and shown by the CLI and the viewer.
const CallerAttribute = "chat.caller"

// WithCaller binds the runs a handler starts (a session, a turn) to the
// caller as the application authenticated it: identify returns the
// caller's identity for a request (a user ID from the application's
// session or token), or an error, answered 401 with its message; nothing is
// started or sent then.
//
// Without it, a run's ID is all a caller needs to read its stream or send
// it a message, and a run started with an [IdempotencyKeyHeader] has an ID
// derived from the workflow and the key alone: whoever sends the same key
// gets the same run, its earlier parts included, so a key is then as
// secret as the conversation. With it, the key names a run among one
// caller's requests only (two callers sending the same key start two
// runs), and every route answers a run started by another caller as an
// unknown session (404), whatever its ID.
func WithCaller(identify func(r *http.Request) (string, error)) HandlerOption {
	return func(c *handlerConfig) { c.caller = identify }
}

// startOptions are the options of a run a request starts: its
// idempotency key, bound to the caller and the caller recorded, if the
// handler knows callers.
func (s *server) startOptions(r *http.Request, key string) ([]workflow.StartOption, error) {
	if s.cfg.caller == nil {
		if key == "" {
			return nil, nil
		}
		return []workflow.StartOption{workflow.WithIdempotencyKey(key)}, nil
	}
	tag, err := s.cfg.callerTag(r)
	if err != nil {
		return nil, err
	}
	opts := []workflow.StartOption{workflow.WithAttributes(map[string]string{CallerAttribute: tag})}
	if key != "" {
		// The tag is of fixed length, so no two (caller, key) pairs meet.
		opts = append(opts, workflow.WithIdempotencyKey(tag+":"+key))
	}
	return opts, nil
}

// owns reports whether the request's caller started run (always, for a
// handler without WithCaller).
func (c handlerConfig) owns(r *http.Request, run world.Run) (bool, error) {
	if c.caller == nil {
		return true, nil
	}
	tag, err := c.callerTag(r)
	return err == nil && run.Attributes[CallerAttribute] == tag, err
}

// errOtherCaller is ownsHook's answer for a hook of another caller's
// run, which routes answer as they answer an unknown token. It is not
// workflow.ErrHookNotFound, so that the wait for a hook not yet created
// does not hold it.
var errOtherCaller = errors.New("chat: the hook belongs to another caller's run")

// ownsHook is owns for the run that waits on the hook with token.
func (c handlerConfig) ownsHook(r *http.Request, wc *workflow.Client, token string) error {
	if c.caller == nil {
		return nil
	}
	hook, err := wc.GetHook(r.Context(), token)
	if err != nil {
		return err
	}
	run, err := wc.World().GetRun(r.Context(), hook.RunID)
	if err != nil {
		return err
	}
	owned, err := c.owns(r, run)
	if err == nil && !owned {
		err = errOtherCaller
	}
	return err
}

// callerTag is the hash of the request's caller that runs carry.
func (c handlerConfig) callerTag(r *http.Request) (string, error) {
	id, err := c.caller(r)
	if err != nil {
		return "", &httpError{http.StatusUnauthorized, err.Error()}
	}
	sum := sha256.Sum256([]byte("chat caller " + strconv.Quote(id)))
	return hex.EncodeToString(sum[:16]), nil
}
