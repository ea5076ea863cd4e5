package faultproxy

import (
	"net/http"
	"net/url"
	"strings"
)

// Call is one request the proxy saw, named the way the World's call counter
// names it: Service "DynamoDB", "SQS", "S3" or "AppSync", Op the operation.
type Call struct {
	Service string
	Op      string // "PutItem", "SendMessage"; for S3 the HTTP method
	Write   bool   // whether the call changes state
}

func (c Call) String() string { return c.Service + "." + c.Op }

// writes are the state-changing operations of the JSON-protocol services.
var writes = map[string]map[string]bool{
	"DynamoDB": {
		"PutItem": true, "UpdateItem": true, "DeleteItem": true,
		"TransactWriteItems": true, "BatchWriteItem": true,
	},
	"SQS": {
		"SendMessage": true, "SendMessageBatch": true,
		"DeleteMessage": true, "DeleteMessageBatch": true,
		"ChangeMessageVisibility": true, "ChangeMessageVisibilityBatch": true,
		"PurgeQueue": true,
	},
}

// services maps the prefix of an X-Amz-Target to its service.
var services = map[string]string{
	"DynamoDB_20120810": "DynamoDB",
	"AmazonSQS":         "SQS",
}

// classify names a request. DynamoDB and SQS (JSON protocol) name the
// operation in X-Amz-Target ("DynamoDB_20120810.PutItem",
// "AmazonSQS.SendMessage"); SQS's older query protocol sends Action as a
// form field. An AppSync Events publish goes to its API's domain. Anything
// else is S3, where every method but GET and HEAD writes.
func classify(r *http.Request, body []byte) Call {
	if strings.Contains(r.Host, ".appsync-api.") && r.URL.Path == "/event" {
		return Call{Service: "AppSync", Op: "EventPublish"}
	}
	if prefix, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), "."); ok {
		service := services[prefix]
		if service == "" {
			service = prefix
		}
		return Call{Service: service, Op: op, Write: writes[service][op]}
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") != "" {
			op := form.Get("Action")
			return Call{Service: "SQS", Op: op, Write: writes["SQS"][op]}
		}
	}
	return Call{Service: "S3", Op: r.Method, Write: r.Method != http.MethodGet && r.Method != http.MethodHead}
}
