// Package awsworld gives a test an AWS World of its own on the emulator:
// a table, a queue and a bucket under a random name, deleted when the test
// ends, so that tests running at once never share a resource.
package awsworld

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
)

// New bootstraps a World named prefix plus a random suffix, with the other
// settings of names (a dead-letter queue, say), and closes and deletes it
// when t ends. It skips t, or fails it under WORKFLOW_REQUIRE_EMULATOR=1,
// when the emulator is not running. The options and the configuration are
// for a test that names the resources to a process of its own.
func New(t testing.TB, prefix string, names awsworld.Names) (*awsworld.World, awsworld.Options, aws.Config) {
	t.Helper()
	cfg := emulator.Require(t)
	name := prefix + strings.ToLower(rand.Text())
	names.Table, names.Queue, names.Bucket = name, name, name
	opts, err := awsworld.Bootstrap(t.Context(), cfg, names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := awsworld.Teardown(context.Background(), cfg, opts); err != nil {
			t.Logf("teardown: %v", err)
		}
	})
	w, err := awsworld.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, opts, cfg
}
