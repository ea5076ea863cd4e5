// Package awsstack deploys this repository's SAM stacks to the emulator
// (MiniStack) for a test, with scripts/local.sh as `make local` does, and
// deletes them, and what they retain, when the test ends. The functions
// module's tests deploy template.yaml on its own; the examples' deploy it
// with the examples' stack beside it.
//
// It is a module of its own (with the IAM check beside it, package
// iamcheck) so that the YAML reader and the AWS clients the tests need
// stay out of the SDK's module graph; being under internal/, only this
// repository's modules import it.
package awsstack

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
)

// Script is how a test deploys: scripts/local.sh's commands.
type Script string

const (
	// World deploys template.yaml as stack NAME, its flow function
	// the stack's default unless FLOW_DIR and FLOW_PKG name another.
	World Script = "deploy"
	// Examples deploys template.yaml as stack NAME with the examples'
	// flow function, and the examples' stack beside it as NAME-examples.
	Examples Script = "deploy-examples"
)

// Stack is a stack a test deployed.
type Stack struct {
	Name string
	// Root is the repository's root, where scripts/local.sh is.
	Root string
	// Outputs are the outputs of the stack (both stacks' with Examples).
	Outputs map[string]string
	// Logs is what the script logged: the deploy gate's report among it.
	Logs string
}

// Require skips the test when MiniStack is not running (fails it in CI)
// and in -short mode, and installs the SAM CLI if need be: on a fresh
// machine scripts/sam.sh first installs it, which takes a couple of
// minutes, not part of the test's own time. It returns a fresh stack
// name starting with prefix.
func Require(t *testing.T, prefix string) *Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("deploys a stack: not in -short mode")
	}
	emulator.Require(t)
	root := Root(t)
	install := exec.CommandContext(t.Context(), filepath.Join(root, "scripts", "sam.sh"), "--version")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("installing the SAM CLI: %v\n%s", err, out)
	}
	return &Stack{Name: prefix + strings.ToLower(rand.Text()[:10]), Root: root}
}

// Root is the repository's root: the directory above the test's that
// holds template.yaml and go.mod.
func Root(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, tmpl := os.Stat(filepath.Join(dir, "template.yaml"))
		_, mod := os.Stat(filepath.Join(dir, "go.mod"))
		if tmpl == nil && mod == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no template.yaml and go.mod above the test's directory")
		}
		dir = parent
	}
}

// Up deploys the stack with script (its environment the test's plus env),
// fails the test unless each of want is among its outputs, and deletes the
// stack and the resources it retains when the test ends.
func (s *Stack) Up(t *testing.T, ctx context.Context, script Script, want []string, env ...string) {
	t.Helper()
	t.Cleanup(func() {
		if script == Examples {
			s.delete(t, s.Name+"-examples")
		}
		s.delete(t, s.Name)
		deleteEventAPI(t, s.Root, s.Name)
		os.RemoveAll(filepath.Join(s.Root, ".aws-sam", "local", s.Name))
		os.RemoveAll(filepath.Join(s.Root, ".aws-sam", "local", s.Name+"-examples"))
	})
	s.Deploy(t, ctx, script, env...)
	for _, k := range want {
		if s.Outputs[k] == "" {
			t.Fatalf("stack output %s missing; got %v\n%s", k, s.Outputs, s.Logs)
		}
	}
	t.Cleanup(func() { deleteRetained(t, s.Outputs) })
}

// Deploy runs script for the stack (again), its environment the test's
// plus env, and sets Outputs and Logs.
func (s *Stack) Deploy(t *testing.T, ctx context.Context, script Script, env ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "local.sh"), string(script), s.Name)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+emulator.Endpoint)
	cmd.Env = append(cmd.Env, env...)
	var logs strings.Builder
	cmd.Stderr = &logs
	stdout, err := cmd.Output()
	s.Logs = logs.String()
	if err != nil {
		t.Fatalf("scripts/local.sh %s %s: %v\n%s", script, s.Name, err, s.Logs)
	}
	// A deploy that works prints no Python traceback (there were two, from
	// reading a new stack's outputs before it existed).
	if strings.Contains(s.Logs, "Traceback (most recent call last)") {
		t.Errorf("scripts/local.sh %s %s printed a Python traceback:\n%s", script, s.Name, s.Logs)
	}
	s.Outputs = map[string]string{}
	for line := range strings.Lines(string(stdout)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			s.Outputs[k] = v
		}
	}
}

func (s *Stack) delete(t *testing.T, stack string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "sam.sh"), "delete", "--stack-name", stack, "--no-prompts", "--region", "us-east-1")
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+emulator.Endpoint, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("sam delete %s: %v\n%s", stack, err, out)
	}
}

// deleteEventAPI deletes the Event API scripts/local.sh made for the
// stack, which the stack names but does not own.
func deleteEventAPI(t *testing.T, root, stack string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := exec.CommandContext(ctx, filepath.Join(root, "scripts", "local.sh"), "delete-events", stack)
	events.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+emulator.Endpoint)
	if out, err := events.CombinedOutput(); err != nil {
		t.Logf("delete the Event API of %s: %v\n%s", stack, err, out)
	}
}

// deleteRetained deletes the table and bucket the template keeps when its
// stack is deleted (DeletionPolicy: Retain), and schedules the deletion of
// the payload key it keeps with them.
func deleteRetained(t *testing.T, out map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := emulator.Config()
	table, bucket, key := out["TableName"], out["BucketName"], out["PayloadKeyArn"]
	if _, err := kms.NewFromConfig(cfg).ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: &key, PendingWindowInDays: aws.Int32(7)}); err != nil {
		t.Logf("delete key %s: %v", key, err)
	}
	if _, err := dynamodb.NewFromConfig(cfg).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &table}); err != nil {
		t.Logf("delete table %s: %v", table, err)
	}
	blobs := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	pages := s3.NewListObjectsV2Paginator(blobs, &s3.ListObjectsV2Input{Bucket: &bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Logf("list bucket %s: %v", bucket, err)
			return
		}
		for _, o := range page.Contents {
			if _, err := blobs.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key}); err != nil {
				t.Logf("delete %s/%s: %v", bucket, aws.ToString(o.Key), err)
			}
		}
	}
	if _, err := blobs.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		var missing *s3types.NoSuchBucket
		if !errors.As(err, &missing) {
			t.Logf("delete bucket %s: %v", bucket, err)
		}
	}
}

// WorldOutputs are the outputs every stack of template.yaml has.
var WorldOutputs = []string{"WebhookUrl", "TableName", "BucketName", "QueueUrl", "DeadLetterQueueUrl", "FlowFunctionName", "FlowFunctionRoleName", "ScheduleGroupName", "DeadLetterAlarmName", "LongStepDeadLetterAlarmName", "PayloadKeyArn"}
