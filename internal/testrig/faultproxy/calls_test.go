package faultproxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestClassify names requests of each protocol the SDK speaks to the
// emulator and tells writes from reads.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		method, target, contentType, body string
		want                              Call
	}{
		{"POST", "DynamoDB_20120810.TransactWriteItems", "application/x-amz-json-1.0", "{}", Call{"DynamoDB", "TransactWriteItems", true}},
		{"POST", "DynamoDB_20120810.Query", "application/x-amz-json-1.0", "{}", Call{"DynamoDB", "Query", false}},
		{"POST", "AmazonSQS.DeleteMessage", "application/x-amz-json-1.0", "{}", Call{"SQS", "DeleteMessage", true}},
		{"POST", "AmazonSQS.ReceiveMessage", "application/x-amz-json-1.0", "{}", Call{"SQS", "ReceiveMessage", false}},
		{"POST", "", "application/x-www-form-urlencoded", "Action=SendMessage&MessageBody=x", Call{"SQS", "SendMessage", true}},
		{"PUT", "", "application/octet-stream", "bytes", Call{"S3", "PUT", true}},
		{"GET", "", "", "", Call{"S3", "GET", false}},
	} {
		r, _ := http.NewRequest(c.method, "http://127.0.0.1/event", strings.NewReader(c.body))
		r.Header.Set("X-Amz-Target", c.target)
		r.Header.Set("Content-Type", c.contentType)
		if got := classify(r, []byte(c.body)); got != c.want {
			t.Errorf("%s %q %q: %+v, want %+v", c.method, c.target, c.body, got, c.want)
		}
	}
	r, _ := http.NewRequest("POST", "http://127.0.0.1/event", strings.NewReader("{}"))
	r.Host = "abc.appsync-api.us-east-1.amazonaws.com"
	if got, want := classify(r, []byte("{}")), (Call{"AppSync", "EventPublish", false}); got != want {
		t.Errorf("an AppSync Events publish: %+v, want %+v", got, want)
	}
}
