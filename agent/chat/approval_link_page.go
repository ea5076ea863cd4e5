package chat

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"

	"github.com/lambdaworkflow/workflow/agent"
)

// linkPage is what an approval link's page says; Link is set on the page
// that asks for a decision.
type linkPage struct {
	Title, Message string
	Link           *agent.ApprovalLinkRequest
	Input          string // the call's input, indented, to edit
}

var (
	pageGone     = linkPage{Title: "This link no longer decides anything", Message: "It has been used, the request was withdrawn, or the link is not one we sent."}
	pageExpired  = linkPage{Title: "This link has expired", Message: "No one decided in time, so the request was refused."}
	pageMethod   = linkPage{Title: "Open this link in a browser", Message: "Approval links are opened (GET) and answered with the page's buttons (POST)."}
	pageTooLarge = linkPage{Title: "Nothing was decided", Message: "The answer was too large. Go back and shorten it."}
	pageRetry    = linkPage{Title: "Nothing was decided yet", Message: "We could not record the answer just now. Go back and send it again."}
)

func confirmPage(link agent.ApprovalLinkRequest) linkPage {
	var in bytes.Buffer
	if json.Indent(&in, link.Input, "", "  ") != nil {
		in.Reset()
		in.Write(link.Input)
	}
	return linkPage{Title: "Approve " + link.Tool + "?", Message: "The assistant asks to run " + link.Tool + " with the input below. You may edit it before you approve.", Link: &link, Input: in.String()}
}

func decidedPage(a agent.Approval) linkPage {
	if a.Approved {
		return linkPage{Title: "Approved", Message: "Your answer was recorded. If the request had been answered already, the first answer stands."}
	}
	return linkPage{Title: "Denied", Message: "Your answer was recorded. If the request had been answered already, the first answer stands."}
}

func badDecisionPage(err error) linkPage {
	return linkPage{Title: "Nothing was decided", Message: "The answer could not be read (" + err.Error() + "). Go back and try again."}
}

// pageTemplate renders every page; html/template escapes what the model
// and the tool put in the call. Deny is the form's first button, so its
// default one: Enter in a field, or a link scanner that submits a form or
// clicks its first button, denies; only a deliberate click approves. (A
// submission without a button decides nothing.)
var pageTemplate = template.Must(template.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex"><title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em}textarea{width:100%;font:14px monospace}button{font-size:1em;margin-right:1em;padding:.4em 1.2em}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p>
{{with .Link}}<form method="post">
<p><label for="input">Input</label><br><textarea id="input" name="input" rows="10">{{$.Input}}</textarea></p>
<p><label for="comment">Comment (optional)</label><br><textarea id="comment" name="comment" rows="3"></textarea></p>
{{if not .ExpiresAt.IsZero}}<p>This link stops working at {{.ExpiresAt.UTC.Format "2006-01-02 15:04 MST"}}.</p>{{end}}
<p><button type="submit" name="decision" value="deny" id="deny">Deny</button>
<button type="submit" name="decision" value="approve" id="approve">Approve</button></p>
</form>{{end}}
</body></html>
`))

// writePage answers with page, uncached, unframed and without a Referer
// (the URL is the link's credential).
func writePage(w http.ResponseWriter, r *http.Request, status int, page linkPage) {
	var body bytes.Buffer
	if err := pageTemplate.Execute(&body, page); err != nil {
		panic(err) // the template and its data are the package's own
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Robots-Tag", "noindex")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body.Bytes())
	}
}
