package aws

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
)

// emulatorConfig returns an SDK config for the emulator, or skips the test
// if the emulator is not running (fails it in CI).
func emulatorConfig(t *testing.T) aws.Config {
	return emulator.Require(t)
}

// newTestWorld bootstraps a table, queue and bucket of the test's own and
// returns a World on them. The resources are deleted when the test ends.
func newTestWorld(t *testing.T) *World {
	return newTestWorldWith(t, emulatorConfig(t))
}

// newTestWorldWith is newTestWorld on a config of the test's own (one
// whose HTTP client injects faults, say); bootstrapping and cleaning up use
// the default HTTP client.
func newTestWorldWith(t *testing.T, cfg aws.Config) *World {
	t.Helper()
	return newTestWorldNamed(t, cfg, func(*Names) {})
}

// newTestWorldNamed is newTestWorldWith on resources named as name
// changes them.
func newTestWorldNamed(t *testing.T, cfg aws.Config, name func(*Names)) *World {
	t.Helper()
	plain := cfg
	plain.HTTPClient = nil
	unique := "wf-test-" + strings.ToLower(rand.Text())
	names := Names{Table: unique, Queue: unique, Bucket: unique}
	name(&names)
	opts, err := Bootstrap(t.Context(), plain, names)
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	t.Cleanup(func() { teardown(t, plain, opts) })
	w, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return w
}

// teardown deletes what Bootstrap created, so the emulator does not pile
// up the resources of every test run.
func teardown(t *testing.T, cfg aws.Config, opts Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Teardown(ctx, cfg, opts); err != nil {
		t.Logf("teardown: %v", err)
	}
}
