package iamcheck

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/world/aws"
)

// Stack is a World's table, queues and bucket of one test's own on the
// emulator, standing for the template's Table, Queue, LongStepQueue and
// Bucket.
type Stack struct {
	Options aws.Options
	// Config is the emulator's SDK config, recording nothing: for the
	// parts of a test that are not the function under test.
	Config sdkaws.Config
	// groupRef and roleRef are the template's expressions for the
	// scheduler's group and role, once SchedulerAsIn has set them.
	groupRef, roleRef string
	// secret and secretRef are a secret of the test's own and the
	// template's expression for it, once SecretAsIn has set them.
	secret, secretRef string
	// model and modelRef are a Bedrock model ID and the template's
	// expression for the one it stands for, once ModelAsIn has set them.
	model, modelRef string
	// key and keyRef are a KMS key of the test's own and the template's
	// expression for it, once PayloadKeyAsIn has set them.
	key, keyRef string
	// events is an Event API of the test's own, which the stack's Worlds
	// push stream writes through once StreamEventsAsIn has set apiRef
	// and namespaceRef, the template's expressions for the one it stands
	// for.
	events               aws.EventAPI
	apiRef, namespaceRef string
}

// NewStack bootstraps the resources and deletes them when the test ends;
// without the emulator it skips the test (fails it in CI).
func NewStack(t *testing.T) *Stack {
	t.Helper()
	cfg := emulator.Require(t)
	name := "wf-iam-" + strings.ToLower(rand.Text())
	opts, err := aws.Bootstrap(t.Context(), cfg, aws.Names{Table: name, Queue: name, Bucket: name, LongStepQueue: name + "-long", EventAPI: name})
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := aws.Teardown(ctx, cfg, opts); err != nil {
			t.Logf("teardown: %v", err)
		}
	})
	s := &Stack{Options: opts, Config: cfg, events: opts.StreamEvents}
	s.Options.StreamEvents = aws.EventAPI{} // until StreamEventsAsIn
	return s
}

// Names maps the stack's resources to the template's logical IDs.
func (s *Stack) Names() Names {
	return Names{
		Table: s.Options.Table, Bucket: s.Options.Bucket, Queues: map[string]string{s.Options.QueueURL: "Queue", s.Options.LongStepQueueURL: "LongStepQueue"},
		ScheduleGroup: s.Options.Scheduler.Group, ScheduleGroupRef: s.groupRef,
		SchedulerRole: s.Options.Scheduler.RoleARN, SchedulerRoleRef: s.roleRef,
		Secret: s.secret, SecretRef: s.secretRef,
		Model: s.model, ModelRef: s.modelRef,
		PayloadKey: s.key, PayloadKeyRef: s.keyRef,
		EventAPIRef: s.apiRef, EventNamespaceRef: s.namespaceRef,
	}
}

// StreamEventsAsIn gives the stack's Worlds an Event API of the test's
// own, as the template gives function one in its
// WORKFLOW_STREAM_EVENTS_API_ID, and reports whether it does: the
// Worlds then publish run streams' writes and subscribe to them (record
// a World's requests with Recorder.Watch).
func (s *Stack) StreamEventsAsIn(t *testing.T, tmpl *Template, function string) bool {
	t.Helper()
	id, ok := tmpl.Variable(function, "WORKFLOW_STREAM_EVENTS_API_ID")
	if !ok {
		return false
	}
	namespace, ok := tmpl.Variable(function, "WORKFLOW_STREAM_EVENTS_NAMESPACE")
	if !ok {
		t.Fatalf("the template sets WORKFLOW_STREAM_EVENTS_API_ID on %s but no WORKFLOW_STREAM_EVENTS_NAMESPACE", function)
	}
	s.Options.StreamEvents = s.events
	s.apiRef = "arn:${AWS::Partition}:appsync:${AWS::Region}:${AWS::AccountId}:apis/" + id
	s.namespaceRef = namespace
	return true
}

// SchedulerAsIn gives the stack's Worlds a schedule group of the test's
// own, as the template gives function one when it sets its
// WORKFLOW_SCHEDULE_GROUP, and reports whether it does.
func (s *Stack) SchedulerAsIn(t *testing.T, tmpl *Template, function string) bool {
	t.Helper()
	group, ok := tmpl.Variable(function, "WORKFLOW_SCHEDULE_GROUP")
	if !ok {
		return false
	}
	s.groupRef = group
	s.roleRef, _ = tmpl.Variable(function, "WORKFLOW_SCHEDULER_ROLE_ARN")
	name := s.Options.Table // unique to the test, and a valid group name
	sched := scheduler.NewFromConfig(s.Config)
	if _, err := sched.CreateScheduleGroup(t.Context(), &scheduler.CreateScheduleGroupInput{Name: &name}); err != nil {
		t.Fatalf("CreateScheduleGroup: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := sched.DeleteScheduleGroup(ctx, &scheduler.DeleteScheduleGroupInput{Name: &name}); err != nil {
			t.Logf("DeleteScheduleGroup: %v", err)
		}
	})
	attrs, err := sqs.NewFromConfig(s.Config).GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl: &s.Options.QueueURL, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("the queue's ARN: %v", err)
	}
	s.Options.Scheduler = aws.SchedulerOptions{
		Group:    name,
		RoleARN:  "arn:aws:iam::000000000000:role/" + name, // the emulator does not check it
		QueueARN: attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)],
	}
	return true
}

// SecretAsIn makes a secret of the test's own holding value, standing for
// the one the template names in function's environment variable variable,
// and returns its name: the test's function reads it where the deployed
// one reads the template's.
func (s *Stack) SecretAsIn(t *testing.T, tmpl *Template, function, variable, value string) string {
	t.Helper()
	ref, ok := tmpl.Variable(function, variable)
	if !ok {
		t.Fatalf("the template sets no %s on %s", variable, function)
	}
	name := s.Options.Table // unique to the test
	secrets := secretsmanager.NewFromConfig(s.Config)
	if _, err := secrets.CreateSecret(t.Context(), &secretsmanager.CreateSecretInput{Name: &name, SecretString: &value}); err != nil {
		t.Fatalf("CreateSecret: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		force := true
		if _, err := secrets.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: &name, ForceDeleteWithoutRecovery: &force}); err != nil {
			t.Logf("DeleteSecret: %v", err)
		}
	})
	s.secret, s.secretRef = name, ref
	return name
}

// ModelAsIn makes the test's calls to Bedrock model id stand for the one
// the template's parameter names (any ID does on the emulator, whose mock
// answers them all).
func (s *Stack) ModelAsIn(t *testing.T, tmpl *Template, parameter, id string) {
	t.Helper()
	if _, ok := tmpl.parameters[parameter]; !ok {
		t.Fatalf("the template has no parameter %s", parameter)
	}
	s.model, s.modelRef = id, "${"+parameter+"}"
}

// PayloadKeyAsIn makes a KMS key of the test's own, standing for the one
// the template names in function's WORKFLOW_PAYLOAD_KMS_KEY, and sets
// that variable to it for the rest of the test: the payload codec the
// function's code builds from the environment (aws.PayloadCodecFromEnv)
// seals with it. The emulator keeps the key, scheduled for deletion.
func (s *Stack) PayloadKeyAsIn(t *testing.T, tmpl *Template, function string) {
	t.Helper()
	ref, ok := tmpl.Variable(function, aws.PayloadKeyEnv)
	if !ok {
		t.Fatalf("the template sets no %s on %s", aws.PayloadKeyEnv, function)
	}
	keys := kms.NewFromConfig(s.Config)
	key, err := keys.CreateKey(t.Context(), &kms.CreateKeyInput{Description: sdkaws.String(s.Options.Table)})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	arn := sdkaws.ToString(key.KeyMetadata.Arn)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := keys.ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: &arn, PendingWindowInDays: sdkaws.Int32(7)}); err != nil {
			t.Logf("ScheduleKeyDeletion: %v", err)
		}
	})
	t.Setenv(aws.PayloadKeyEnv, arn)
	s.key, s.keyRef = arn, ref
}

// Recorded returns the stack's config with r recording every call of the
// clients made from it, and the further API options opts.
func (s *Stack) Recorded(r *Recorder, opts ...func(*middleware.Stack) error) sdkaws.Config {
	cfg := s.Config.Copy()
	cfg.APIOptions = append(append(cfg.APIOptions, r.Register), opts...)
	return cfg
}

// Incompressible returns n bytes of random text, which the payload
// codec's compression cannot bring under what a table item holds inline:
// a test's large payload still goes to S3 when its run is sealed.
func Incompressible(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(rand.Text())
	}
	return b.String()[:n]
}

// errRefused is the failure Failing answers with.
var errRefused = errors.New("iamcheck: the service refused the call (a test's fault)")

// Failing is an API option that fails, before it is sent, every call whose
// input refuses matches: it stands for a service failing the call, so that
// a test can take the path a function takes after such a failure. Added
// after a Recorder, the failed call is still recorded.
func Failing(refuses func(params any) bool) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("iamcheckFailing",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if refuses(in.Parameters) {
					return middleware.InitializeOutput{}, middleware.Metadata{}, errRefused
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// World returns a World on the stack's resources whose clients are made
// from cfg.
func (s *Stack) World(t *testing.T, cfg sdkaws.Config) *aws.World {
	t.Helper()
	w, err := aws.New(cfg, s.Options)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Interposed is a function's World with a test's hook before each stream
// read, to order a scenario's events; the reads themselves are the
// World's own.
type Interposed struct {
	*aws.World
	BeforeRead func()
}

// ReadStream implements world.Streams.
func (w *Interposed) ReadStream(ctx context.Context, name string, from int64) ([][]byte, bool, error) {
	if w.BeforeRead != nil {
		w.BeforeRead()
	}
	return w.World.ReadStream(ctx, name, from)
}

// Attribute waits until a run's attribute key is set (attrs is the run's
// Attributes method) and returns it.
func Attribute(t *testing.T, ctx context.Context, attrs func(context.Context) (map[string]string, error), key string) string {
	t.Helper()
	for {
		got, err := attrs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got[key] != "" {
			return got[key]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run never set its attribute %q", key)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
