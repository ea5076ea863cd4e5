package workflow

import (
	"net/http"
	"slices"
	"strings"
)

// defaultRequestHeaders are the request headers a webhook records unless
// WithRequestHeaders names others: the standard ones that describe the
// body and the caller and carry no secret. Everything else is left out by
// default, because a webhook's request stays in its run's log, readable by
// whoever can list runs, for as long as the run is kept, and senders put
// their secrets in headers of every name (X-Gitlab-Token,
// X-Telegram-Bot-Api-Secret-Token, Api-Key, ...): no list of credentials
// can be complete, a list of harmless headers can.
var defaultRequestHeaders = []string{
	"Accept",
	"Content-Encoding",
	"Content-Language",
	"Content-Type",
	"Date",
	"User-Agent",
}

// recordedHeaders returns the part of header a webhook records: the
// headers allowed names, or with allowed nil defaultRequestHeaders. Names
// match without regard to case, so that a header map not in canonical form
// (built by hand, not by net/http) is filtered too.
func recordedHeaders(header http.Header, allowed []string) http.Header {
	if allowed == nil {
		allowed = defaultRequestHeaders
	}
	recorded := http.Header{}
	for name, values := range header {
		if slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, name) }) {
			recorded[name] = slices.Clone(values)
		}
	}
	return recorded
}
