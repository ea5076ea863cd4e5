package aws

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// faultyHTTP wraps the SDK's HTTP client and answers chosen DynamoDB and
// SQS operations with errors, as AWS does under load. It also keeps the
// body of every request it passes on, by operation.
type faultyHTTP struct {
	next *awshttp.BuildableClient

	mu     sync.Mutex
	faults map[string][]fault // by operation name, used up in order
	bodies map[string][]string
}

// fault is one injected failure. A lost fault lets the request through and
// then replaces the answer, as a dropped connection does after AWS wrote.
type fault struct {
	status int
	code   string
	body   string // extra JSON members of the error document
	lost   bool
	then   func() // runs as the fault fires, before the answer
}

var (
	throttled   = fault{status: 400, code: "ThrottlingException"}
	provisioned = fault{status: 400, code: "ProvisionedThroughputExceededException"}
	serverError = fault{status: 500, code: "InternalServerError"}
	lostAnswer  = fault{status: 500, code: "InternalServerError", lost: true}
)

func newFaultyHTTP() *faultyHTTP {
	return &faultyHTTP{next: awshttp.NewBuildableClient(), faults: map[string][]fault{}, bodies: map[string][]string{}}
}

// inject queues faults for the next requests of operation op ("PutItem",
// "SendMessage").
func (f *faultyHTTP) inject(op string, faults ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[op] = append(f.faults[op], faults...)
}

// pending returns how many injected faults have not fired yet.
func (f *faultyHTTP) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, fs := range f.faults {
		n += len(fs)
	}
	return n
}

func (f *faultyHTTP) requests(op string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[op]
}

func (f *faultyHTTP) Do(req *http.Request) (*http.Response, error) {
	// DynamoDB and SQS (JSON protocol) name the operation in X-Amz-Target:
	// "DynamoDB_20120810.PutItem", "AmazonSQS.SendMessage".
	_, op, _ := strings.Cut(req.Header.Get("X-Amz-Target"), ".")
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	f.mu.Lock()
	f.bodies[op] = append(f.bodies[op], string(body))
	var flt *fault
	if fs := f.faults[op]; len(fs) > 0 {
		flt, f.faults[op] = &fs[0], fs[1:]
	}
	f.mu.Unlock()

	if flt == nil {
		return f.next.Do(req)
	}
	if flt.lost {
		resp, err := f.next.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if flt.then != nil {
		flt.then()
	}
	doc := fmt.Sprintf(`{"__type":"%s","message":"injected by the test"%s}`, flt.code, flt.body)
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", flt.status, http.StatusText(flt.status)),
		StatusCode:    flt.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Errortype": {flt.code}},
		Body:          io.NopCloser(strings.NewReader(doc)),
		ContentLength: int64(len(doc)),
		Request:       req,
	}, nil
}

// newFaultyWorld returns a World on fresh resources whose requests go
// through a faultyHTTP.
func newFaultyWorld(t *testing.T) (*World, *faultyHTTP) {
	t.Helper()
	cfg := emulatorConfig(t)
	faults := newFaultyHTTP()
	cfg.HTTPClient = faults
	return newTestWorldWith(t, cfg), faults
}

// TestRequestBodiesOnlyRead checks the guard against aws/aws-sdk-go-v2#2737
// (see http.go): the bodies net/http gets cannot be copied through
// io.WriterTo.
func TestRequestBodiesOnlyRead(t *testing.T) {
	var sawWriterTo bool
	client := withPlainBodies(httpClientFunc(func(req *http.Request) (*http.Response, error) {
		_, sawWriterTo = req.Body.(io.WriterTo)
		return nil, errors.New("not sent")
	}))
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", io.NopCloser(bytes.NewReader([]byte("{}"))))
	if _, ok := req.Body.(io.WriterTo); !ok {
		t.Fatal("the test's body should offer WriterTo, as the SDK's do")
	}
	_, _ = client.Do(req)
	if sawWriterTo {
		t.Error("the request body reached the transport with io.WriterTo")
	}
}

type httpClientFunc func(*http.Request) (*http.Response, error)

func (f httpClientFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }
