package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// NewRunID is the ID a new run of workflow gets: runID if the caller chose
// one; derived from the workflow and an idempotency key, so that a retried
// start finds the run the first one made; otherwise random.
func NewRunID(workflow, runID, key string) string {
	switch {
	case runID != "":
		return runID
	case key != "":
		sum := sha256.Sum256([]byte(workflow + "\x00" + key))
		return "wrun_" + hex.EncodeToString(sum[:13])
	default:
		return "wrun_" + rand.Text()
	}
}

// CheckAttributes refuses attribute keys starting with '$': the engine
// reserves them ($deployment, $parentRunId, …).
func CheckAttributes(attrs map[string]string) error {
	for k := range attrs {
		if strings.HasPrefix(k, "$") {
			return fmt.Errorf("workflow: attribute %q: keys starting with '$' are reserved", k)
		}
	}
	return nil
}
