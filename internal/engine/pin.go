package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/lambdaworkflow/workflow/world"
)

// AttrDeployment is the reserved run attribute naming the deployment the
// run is pinned to: listings filter on it, and a worker reads it before it
// takes the run's lease. The run_started event holds the same ID, which
// is what a worker holding the lease goes by.
const AttrDeployment = "$deployment"

// PinnedElsewhere is the error of a worker that will not drive a run
// because the run is pinned to another deployment: its code is not this
// worker's, and replaying the log against this code could fail the run.
type PinnedElsewhere struct {
	RunID      string
	Deployment string // the deployment that must drive the run
}

func (p *PinnedElsewhere) Error() string {
	return fmt.Sprintf("run %s is pinned to deployment %s", p.RunID, p.Deployment)
}

// runStartedPayload is what run_started records. Logs written before runs
// were pinned have no payload: such runs are unpinned.
type runStartedPayload struct {
	Deployment string `json:"deployment,omitempty"`
}

// pinnedTo returns the deployment the log pins the run to ("" if none).
func pinnedTo(events []world.Event) string {
	for _, ev := range events {
		if ev.Type != world.RunStarted {
			continue
		}
		var p runStartedPayload
		if len(ev.Payload) > 0 && json.Unmarshal(ev.Payload, &p) == nil {
			return p.Deployment
		}
		return ""
	}
	return ""
}

// pinnedElsewhere says whether a run of workflow pinned to deployment must
// be left to that deployment. A run of a workflow that moves forward
// (VersionPolicy Latest) is driven by whichever deployment receives it.
func (e *Engine) pinnedElsewhere(runID, workflow, deployment string) error {
	if e.Deployment == "" || deployment == "" || deployment == e.Deployment {
		return nil
	}
	if def, ok := e.Registry.Workflow(workflow); ok && def.Latest {
		return nil
	}
	return &PinnedElsewhere{RunID: runID, Deployment: deployment}
}

// pin returns the run_started event's payload and the attributes that pin
// a run to this engine's deployment (nil, nil without a deployment).
func (e *Engine) pin() (payload any, attrs map[string]string) {
	if e.Deployment == "" {
		return nil, nil
	}
	return runStartedPayload{Deployment: e.Deployment}, map[string]string{AttrDeployment: e.Deployment}
}

// missingWorkflow is the failure of a run that this deployment must drive
// but whose workflow it does not hold.
func (e *Engine) missingWorkflow(workflow string) error {
	return fmt.Errorf("%w: workflow %q is not registered in deployment %s", ErrUnknownWorkflow, workflow, e.Deployment)
}

// DefaultDeployment is the deployment ID of a worker that names none: the
// VCS revision the binary was built from (with a hash of the binary when
// the tree was modified, since two dirty builds of one revision differ),
// or, for binaries built without VCS information (go test, go run), the
// hash of the executable; "unknown" if even that cannot be read.
var DefaultDeployment = sync.OnceValue(func() string {
	rev, modified := "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev != "" && !modified {
		return rev
	}
	sum := executableHash()
	switch {
	case rev != "" && sum != "":
		return rev + "-dirty-" + sum
	case rev != "":
		return rev + "-dirty"
	case sum != "":
		return "exe-" + sum
	}
	return "unknown"
})

func executableHash() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
