// Package iamcheck holds the IAM grants template.yaml gives a function up
// against the AWS calls the function's code makes, so that a test can fail
// when a function is granted an action it never calls, or calls one it is
// not granted. Emulators do not enforce IAM; this check is what stands in
// for AWS refusing a call.
//
// A Recorder, registered on an SDK config's APIOptions, turns each call
// into the IAM actions it needs on the resources it names, written the way
// the template names them ("${Table.Arn}/index/runs-by-created"); Grants
// reads what the template grants a function; Compare lists the
// differences.
package iamcheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/lambdaworkflow/workflow/world/aws"
)

// Grant is one IAM action on one resource: a call's need, or a template's
// grant (then Resource may hold IAM wildcards).
type Grant struct {
	Action   string
	Resource string
}

func (g Grant) String() string { return g.Action + " on " + g.Resource }

// Names maps the names a test's calls use to the template's logical IDs:
// the test's own table, queues, bucket and so on stand for the stack's.
type Names struct {
	Table  string
	Bucket string
	// Queues maps each queue's URL to its logical ID ("Queue",
	// "DeadLetterQueue").
	Queues map[string]string
	// Function is the flow function's name, whose versions it invokes.
	Function string
	// ScheduleGroup and SchedulerRole are the scheduler's group name and
	// role ARN; the Refs are the template's expressions for them (the
	// values of the function's WORKFLOW_SCHEDULE_GROUP and
	// WORKFLOW_SCHEDULER_ROLE_ARN, e.g. "${ScheduleGroup}").
	ScheduleGroup, ScheduleGroupRef string
	SchedulerRole, SchedulerRoleRef string
	// Secret is the secret the test's calls read, SecretRef the template's
	// expression for the one it stands for (e.g. "${ApiToken}").
	Secret, SecretRef string
	// Model is the Bedrock model ID the test's calls use, ModelRef the
	// template's expression for the one it stands for (e.g.
	// "${FlightModelId}").
	Model, ModelRef string
	// PayloadKey is the ARN of the KMS key the test's calls use,
	// PayloadKeyRef the template's expression for the one it stands for
	// (the function's WORKFLOW_PAYLOAD_KMS_KEY).
	PayloadKey, PayloadKeyRef string
	// EventAPIRef and EventNamespaceRef are the template's expressions for
	// the Event API and channel namespace the test's Worlds push stream
	// writes through (the function's WORKFLOW_STREAM_EVENTS_API_ID and
	// WORKFLOW_STREAM_EVENTS_NAMESPACE); empty: they push nothing.
	EventAPIRef, EventNamespaceRef string
}

// Recorder records the grants the calls made through a config need.
type Recorder struct {
	names Names
	mu    sync.Mutex
	needs map[Grant]int
	errs  []error
	// watched are Worlds whose Event API requests (signed HTTP and a
	// WebSocket, not SDK calls) count too: see Watch.
	watched []*aws.World
}

// NewRecorder returns a Recorder for calls on the resources names names.
func NewRecorder(names Names) *Recorder {
	return &Recorder{names: names, needs: map[Grant]int{}}
}

// Register adds the recording middleware to a client's stack: append it to
// an aws.Config's APIOptions before the clients are made from it. It sits
// in the initialize step, where the call's input is still the typed
// struct, and so records a call once however often it is retried.
func (r *Recorder) Register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("iamcheckRecorder",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			r.record(in.Parameters, err)
			return out, md, err
		}), middleware.Before)
}

func (r *Recorder) record(params any, callErr error) {
	needs, err := r.names.needs(params, callErr)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
	}
	for _, g := range needs {
		r.needs[g]++
	}
}

// Watch adds the Event API requests w makes to what r records. They go
// through no SDK client, so the middleware never sees them; the World
// counts each in its Calls as it makes it, under the IAM action's name.
func (r *Recorder) Watch(w *aws.World) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watched = append(r.watched, w)
}

// Needs returns the grants the calls recorded so far need, sorted, or an
// error naming each call the Recorder does not know the IAM actions of.
func (r *Recorder) Needs() ([]Grant, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := slices.Clone(r.errs)
	set := maps.Clone(r.needs)
	for _, w := range r.watched {
		for call, n := range w.Calls() {
			g, ok, err := r.names.eventAPINeed(call)
			errs = append(errs, err)
			if ok && n > 0 {
				set[g]++
			}
		}
	}
	var gs []Grant
	for g := range set {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, compareGrants)
	return gs, errors.Join(errs...)
}

// eventAPINeed is what a World's Event API request, counted in its Calls
// as call, needs: connecting on the API, publishing and subscribing on
// the channel namespace
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsappsync.html).
// ok is false for a count that is no request (a failed publish, counted
// besides the publish itself, or an SDK call).
func (n Names) eventAPINeed(call string) (g Grant, ok bool, err error) {
	op, isEvent := strings.CutPrefix(call, "AppSync.")
	switch {
	case !isEvent || op == "EventPublishFailed":
		return Grant{}, false, nil
	case n.EventAPIRef == "":
		return Grant{}, false, fmt.Errorf("iamcheck: a World made %s without the Event API of the stack: set it with Stack.StreamEventsAsIn", call)
	case op == "EventConnect":
		return Grant{"appsync:" + op, n.EventAPIRef}, true, nil
	case op == "EventPublish" || op == "EventSubscribe":
		return Grant{"appsync:" + op, n.EventAPIRef + "/channelNamespace/" + n.EventNamespaceRef}, true, nil
	}
	return Grant{}, false, fmt.Errorf("iamcheck: no IAM action known for the Event API request %s", call)
}

func compareGrants(a, b Grant) int {
	return strings.Compare(a.Action+" "+a.Resource, b.Action+" "+b.Resource)
}

// needs returns the IAM actions a call with input params needs, after the
// list of each service's actions
// (https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html).
// A call that needs more than its own name says so: the items of a
// DynamoDB transaction are authorised as the single-item calls they stand
// for
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html),
// an S3 copy reads its source and writes its target, tags written with an
// object need s3:PutObjectTagging.
func (n Names) needs(params any, callErr error) ([]Grant, error) {
	switch in := params.(type) {
	// DynamoDB
	case *dynamodb.GetItemInput:
		return n.onTable("GetItem", in.TableName), nil
	case *dynamodb.PutItemInput:
		return n.onTable("PutItem", in.TableName), nil
	case *dynamodb.UpdateItemInput:
		return n.onTable("UpdateItem", in.TableName), nil
	case *dynamodb.DeleteItemInput:
		return n.onTable("DeleteItem", in.TableName), nil
	case *dynamodb.QueryInput:
		return []Grant{{"dynamodb:Query", n.table(in.TableName, in.IndexName)}}, nil
	case *dynamodb.BatchGetItemInput:
		return onTables(n, "BatchGetItem", in.RequestItems), nil
	case *dynamodb.BatchWriteItemInput:
		return onTables(n, "BatchWriteItem", in.RequestItems), nil
	case *dynamodb.TransactWriteItemsInput:
		var gs []Grant
		for _, it := range in.TransactItems {
			gs = append(gs, n.transactItem(it)...)
		}
		return gs, nil
	// SQS
	case *sqs.SendMessageInput:
		return n.onQueue("SendMessage", in.QueueUrl), nil
	case *sqs.SendMessageBatchInput:
		return n.onQueue("SendMessage", in.QueueUrl), nil
	case *sqs.ReceiveMessageInput:
		return n.onQueue("ReceiveMessage", in.QueueUrl), nil
	case *sqs.DeleteMessageInput:
		return n.onQueue("DeleteMessage", in.QueueUrl), nil
	case *sqs.DeleteMessageBatchInput:
		return n.onQueue("DeleteMessage", in.QueueUrl), nil
	case *sqs.ChangeMessageVisibilityInput:
		return n.onQueue("ChangeMessageVisibility", in.QueueUrl), nil
	case *sqs.ChangeMessageVisibilityBatchInput:
		return n.onQueue("ChangeMessageVisibility", in.QueueUrl), nil
	case *sqs.GetQueueAttributesInput:
		return n.onQueue("GetQueueAttributes", in.QueueUrl), nil
	// S3
	case *s3.GetObjectInput:
		return n.read(in.Key, callErr), nil
	case *s3.HeadObjectInput:
		return n.read(in.Key, callErr), nil
	case *s3.PutObjectInput:
		return n.write("PutObject", in.Key, in.Tagging), nil
	case *s3.CreateMultipartUploadInput:
		return n.write("PutObject", in.Key, in.Tagging), nil
	case *s3.UploadPartInput:
		return n.write("PutObject", in.Key, nil), nil
	case *s3.CompleteMultipartUploadInput:
		return n.write("PutObject", in.Key, nil), nil
	case *s3.AbortMultipartUploadInput:
		return n.write("AbortMultipartUpload", in.Key, nil), nil
	case *s3.DeleteObjectInput:
		return n.write("DeleteObject", in.Key, nil), nil
	case *s3.CopyObjectInput:
		var tagging *string
		if in.TaggingDirective == s3types.TaggingDirectiveReplace {
			tagging = in.Tagging
		}
		return append(n.copySource(in.CopySource), n.write("PutObject", in.Key, tagging)...), nil
	// Lambda
	case *lambda.InvokeInput:
		return []Grant{{"lambda:InvokeFunction", n.function(in.FunctionName, in.Qualifier)}}, nil
	// EventBridge Scheduler: a schedule made with a role passes it.
	case *scheduler.CreateScheduleInput:
		gs := []Grant{{"scheduler:CreateSchedule", n.schedule(in.GroupName, in.Name)}}
		if in.Target != nil && in.Target.RoleArn != nil {
			gs = append(gs, Grant{"iam:PassRole", n.role(*in.Target.RoleArn)})
		}
		return gs, nil
	// Secrets Manager
	case *secretsmanager.GetSecretValueInput:
		return []Grant{{"secretsmanager:GetSecretValue", n.secretRef(in.SecretId)}}, nil
	// Bedrock Runtime: the Converse API is authorised as the invocation
	// it stands for
	// (https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-call.html).
	case *bedrockruntime.ConverseInput:
		return []Grant{{"bedrock:InvokeModel", n.model(in.ModelId)}}, nil
	case *bedrockruntime.ConverseStreamInput:
		return []Grant{{"bedrock:InvokeModelWithResponseStream", n.model(in.ModelId)}}, nil
	// KMS: payloads' data keys.
	case *kms.GenerateDataKeyInput:
		return []Grant{{"kms:GenerateDataKey", n.key(in.KeyId)}}, nil
	case *kms.DecryptInput:
		return []Grant{{"kms:Decrypt", n.key(in.KeyId)}}, nil
	}
	return nil, fmt.Errorf("iamcheck: no IAM actions known for a call with %T: add them to Names.needs", params)
}

func (n Names) onTable(op string, table *string) []Grant {
	return []Grant{{"dynamodb:" + op, n.table(table, nil)}}
}

func onTables[V any](n Names, op string, items map[string]V) []Grant {
	var gs []Grant
	for table := range items {
		gs = append(gs, Grant{"dynamodb:" + op, n.table(&table, nil)})
	}
	return gs
}

func (n Names) transactItem(it ddbtypes.TransactWriteItem) []Grant {
	switch {
	case it.Put != nil:
		return n.onTable("PutItem", it.Put.TableName)
	case it.Update != nil:
		return n.onTable("UpdateItem", it.Update.TableName)
	case it.Delete != nil:
		return n.onTable("DeleteItem", it.Delete.TableName)
	case it.ConditionCheck != nil:
		return n.onTable("ConditionCheckItem", it.ConditionCheck.TableName)
	}
	return nil
}

func (n Names) onQueue(op string, url *string) []Grant {
	id, ok := n.Queues[deref(url)]
	if !ok {
		return []Grant{{"sqs:" + op, "queue " + deref(url) + " of no stack"}}
	}
	return []Grant{{"sqs:" + op, "${" + id + ".Arn}"}}
}

// read is what reading an object needs. A read of a missing object answers
// 404 only to a caller that may list the bucket, 403 to others
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html): a
// call that got the 404 needed s3:ListBucket too.
func (n Names) read(key *string, callErr error) []Grant {
	gs := n.write("GetObject", key, nil)
	var missing *s3types.NoSuchKey
	var notFound *s3types.NotFound
	if errors.As(callErr, &missing) || errors.As(callErr, &notFound) {
		gs = append(gs, Grant{"s3:ListBucket", "${Bucket.Arn}"})
	}
	return gs
}

// write is an action on an object; tagging, if set, is written with it.
func (n Names) write(op string, key, tagging *string) []Grant {
	gs := []Grant{{"s3:" + op, "${Bucket.Arn}/" + deref(key)}}
	if tagging != nil {
		gs = append(gs, Grant{"s3:PutObjectTagging", "${Bucket.Arn}/" + deref(key)})
	}
	return gs
}

// copySource is the read of a copy's source, "bucket/key" URL-encoded.
func (n Names) copySource(src *string) []Grant {
	path, err := url.PathUnescape(deref(src))
	if err != nil {
		path = deref(src)
	}
	bucket, key, _ := strings.Cut(path, "/")
	if bucket != n.Bucket {
		return []Grant{{"s3:GetObject", "object " + deref(src) + " of no stack"}}
	}
	return n.write("GetObject", &key, nil)
}

func (n Names) table(name, index *string) string {
	if deref(name) != n.Table {
		return "table " + deref(name) + " of no stack"
	}
	if index != nil {
		return "${Table.Arn}/index/" + *index
	}
	return "${Table.Arn}"
}

func (n Names) function(name, qualifier *string) string {
	if deref(name) != n.Function {
		return "function " + deref(name) + " of no stack"
	}
	if qualifier == nil {
		return "${FlowFunction.Arn}"
	}
	return "${FlowFunction.Arn}:" + *qualifier
}

func (n Names) schedule(group, name *string) string {
	if deref(group) != n.ScheduleGroup {
		return "schedule group " + deref(group) + " of no stack"
	}
	return "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/" + n.ScheduleGroupRef + "/" + deref(name)
}

func (n Names) role(arn string) string {
	if arn != n.SchedulerRole {
		return "role " + arn + " of no stack"
	}
	return n.SchedulerRoleRef
}

func (n Names) secretRef(id *string) string {
	if deref(id) != n.Secret {
		return "secret " + deref(id) + " of no stack"
	}
	return n.SecretRef
}

// model is a foundation model's ARN, as the template writes it.
func (n Names) model(id *string) string {
	if deref(id) != n.Model {
		return "model " + deref(id) + " of no stack"
	}
	return FoundationModelARN + n.ModelRef
}

// FoundationModelARN is the template's prefix of a Bedrock foundation
// model's ARN, before the model's ID.
const FoundationModelARN = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/"

func (n Names) key(id *string) string {
	if n.PayloadKey == "" || deref(id) != n.PayloadKey {
		return "key " + deref(id) + " of no stack"
	}
	return n.PayloadKeyRef
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
