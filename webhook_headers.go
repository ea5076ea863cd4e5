package workflow

import (
	"net/http"
	"slices"
	"strings"
)

// credentialHeaders are the request headers a webhook does not record
// unless WithRequestHeaders names them: each carries a caller's secret (a
// bearer token, a session, an API key, temporary AWS credentials), and a
// webhook's request stays in its run's log, readable by whoever can list
// runs, for as long as the run is kept.
var credentialHeaders = []string{
	"Authorization",
	"Proxy-Authorization",
	"Cookie",
	"X-Api-Key",
	"X-Auth-Token",
	"X-Amz-Security-Token",
}

// recordedHeaders returns the part of header a webhook records: the
// headers allowed names, or with allowed nil every one but the
// credentials. Names match without regard to case, so that a header map
// not in canonical form (built by hand, not by net/http) is filtered too.
func recordedHeaders(header http.Header, allowed []string) http.Header {
	keep := func(name string) bool {
		if allowed == nil {
			return !slices.ContainsFunc(credentialHeaders, func(c string) bool { return strings.EqualFold(c, name) })
		}
		return slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, name) })
	}
	recorded := http.Header{}
	for name, values := range header {
		if keep(name) {
			recorded[name] = slices.Clone(values)
		}
	}
	return recorded
}
