package bedrock

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

// readOnlyBody hides the WriteTo method of the SDK's request body. The
// SDK wraps the body so that a Close makes later reads return io.EOF,
// and closes it once the response arrives; but its WriteTo returns that
// io.EOF as an error, and net/http, when it probes the body for bytes
// past its length after writing it, reads with io.Copy, which uses
// WriteTo. A response that arrives before the probe (a fast server, a
// loaded machine) then fails the write, and the transport closes the
// connection the answer is streaming on: "use of closed network
// connection" in the middle of the stream, and a call billed again. With
// Read alone, io.EOF ends the probe as it should.
type readOnlyBody struct {
	client bedrockruntime.HTTPClient
}

func (c readOnlyBody) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = struct{ io.ReadCloser }{req.Body}
	}
	return c.client.Do(req)
}

// withReadOnlyBody is the per-call option that installs readOnlyBody.
func withReadOnlyBody(o *bedrockruntime.Options) { o.HTTPClient = readOnlyBody{o.HTTPClient} }
