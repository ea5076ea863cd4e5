package aws

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// plainBodies is an HTTP client that hands net/http request bodies which
// can only Read and Close.
//
// smithy-go closes a request's body as soon as the response headers
// arrive. net/http may not be done with the body then: once it has sent
// the bytes, it reads the body once more to check for excess, and a closed
// smithy body answers that read, when made through io.WriterTo, with
// io.EOF as an error. net/http then closes the connection under the
// response it is reading, and the SDK retries a request that AWS has
// already carried out (aws/aws-sdk-go-v2#2737: "use of closed network
// connection"). Through Read the same io.EOF is a clean end of body.
//
// The World stays correct when a retry does repeat a write (see doc.go);
// this only keeps such retries as rare as lost connections.
type plainBodies struct{ next aws.HTTPClient }

// withPlainBodies wraps cfg's HTTP client, or the SDK's default one.
func withPlainBodies(client aws.HTTPClient) aws.HTTPClient {
	if client == nil {
		client = awshttp.NewBuildableClient()
	}
	return plainBodies{next: client}
}

func (c plainBodies) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = readCloser{req.Body}
	}
	return c.next.Do(req)
}

// readCloser has the methods of io.ReadCloser and no others.
type readCloser struct{ io.ReadCloser }
