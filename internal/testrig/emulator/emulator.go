// Package emulator finds the local AWS emulator (MiniStack, started by
// scripts/emulator.sh) that the AWS tests, the benchmarks and the end-to-end
// deploy test run against, so they all check for it and report its absence
// the same way.
package emulator

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Endpoint is where scripts/emulator.sh starts MiniStack.
const Endpoint = "http://127.0.0.1:4566"

// Health reports whether MiniStack answers its health check within timeout.
func Health(timeout time.Duration) error {
	client := http.Client{Timeout: timeout}
	resp, err := client.Get(Endpoint + "/_ministack/health")
	if err != nil {
		return fmt.Errorf("MiniStack does not answer on %s (start it with scripts/emulator.sh start): %w", Endpoint, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("MiniStack's health check on %s answered %s", Endpoint, resp.Status)
	}
	return nil
}

// Config is an SDK config for the emulator: any credentials do.
func Config() aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(Endpoint),
		Credentials:  aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("test", "test", "")),
	}
}

// busyTimeout is how long a running emulator may take to answer its health
// check: on a loaded machine (CI beside other suites) it has taken over 2 s.
// A stopped emulator refuses the connection at once, so waiting this long
// costs nothing when it is absent.
const busyTimeout = 30 * time.Second

// Require skips the test, saying why, when the emulator is not running,
// and fails it instead when WORKFLOW_REQUIRE_EMULATOR=1 (CI, which starts
// the emulator itself).
func Require(t testing.TB) aws.Config {
	t.Helper()
	if err := Health(busyTimeout); err != nil {
		if os.Getenv("WORKFLOW_REQUIRE_EMULATOR") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return Config()
}
