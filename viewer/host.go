package viewer

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// WithAllowedHosts makes the viewer answer requests addressed to names as
// well (a host name or IP address, matched without regard to case and on
// any port), for a viewer reached under a name of its own. Without it the
// viewer answers only loopback: localhost, 127.0.0.1 and ::1 (any loopback
// address), on any port.
func WithAllowedHosts(names ...string) Option {
	return func(h *handler) {
		for _, n := range names {
			h.hosts = append(h.hosts, hostName(n))
		}
	}
}

// allowedHost reports whether a request's Host names this viewer. A page
// on another site can make the operator's browser reach a loopback server
// by pointing a name of its own at 127.0.0.1 (DNS rebinding); the browser
// then sends that name as Host, which is how the viewer tells it apart.
// An IP literal involves no DNS, so any loopback address is the viewer.
func (h *handler) allowedHost(r *http.Request) bool {
	name := hostName(r.Host)
	if name == "localhost" {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	return name != "" && slices.Contains(h.hosts, name)
}

// hostName is the name in a Host header or a configured name: without
// its port, brackets or final dot, in lower case.
func hostName(host string) string {
	if name, _, err := net.SplitHostPort(host); err == nil {
		host = name
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

func refuseHost(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "this viewer does not answer to the host "+strconv.Quote(r.Host)+
		": it answers loopback (localhost, 127.0.0.1, ::1) and the names it was given "+
		"(viewer.WithAllowedHosts, workflow web --allow-host)", http.StatusMisdirectedRequest)
}
