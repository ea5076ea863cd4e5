package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Memory is the peak resident memory of a worker process holding many
// suspended runs, and of one holding a fan-out's branches in flight. Each
// is measured in a child process of its own, so that the suite's other
// benchmarks do not raise the peak.
type Memory struct {
	Method    string     `json:"method"`
	Suspended *MemSample `json:"suspendedRuns,omitempty"`
	Inflight  *MemSample `json:"inflightBranches,omitempty"`
}

// MemSample is one child's reading. PeakKB is VmHWM (peak resident set)
// from the start until the runs were held for HoldSeconds; the rest are
// for context: the process before any run started, the resident set at
// the moment of measurement, and the live Go heap then;
// of the resident set, the Go heap's pages the runtime holds from the OS
// (live or free, not yet returned) and the goroutines' stacks, so that
// what is left of RSS is the binary and memory outside Go's (SQLite's).
type MemSample struct {
	Runs         int     `json:"runs"`
	Branches     int     `json:"branches,omitempty"`
	BaselineKB   int64   `json:"baselineRssKb"`
	PeakKB       int64   `json:"peakRssKb"`
	RSSKB        int64   `json:"rssKb"`
	HeapInuseKB  int64   `json:"goHeapInuseKb"`
	HeapHeldKB   int64   `json:"goHeapHeldKb"`
	StackKB      int64   `json:"goStackInuseKb"`
	Goroutines   int     `json:"goroutines"`
	SetupSeconds float64 `json:"setupSeconds"`
	HoldSeconds  float64 `json:"holdSeconds,omitempty"`
}

// suspendedHold is how long the suspended-runs child holds its runs
// after the last one suspended before it reads the peak: a worker holds
// waiting runs for hours, and what it does meanwhile (polling, timers,
// a cache's upkeep) takes memory too, which the instant the last run
// suspended does not show.
const suspendedHold = 2 * time.Second

// procStatus reads VmRSS and VmHWM from /proc/self/status, in kB.
func procStatus() (rss, hwm int64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		field := func(prefix string) (int64, bool) {
			if !strings.HasPrefix(line, prefix) {
				return 0, false
			}
			v, err := strconv.ParseInt(strings.Fields(strings.TrimPrefix(line, prefix))[0], 10, 64)
			return v, err == nil
		}
		if v, ok := field("VmRSS:"); ok {
			rss = v
		}
		if v, ok := field("VmHWM:"); ok {
			hwm = v
		}
	}
	return rss, hwm
}

// MeasureMemory runs the two memory children (exe is this binary, which
// must call RunChild when given ChildFlag) on a subject.
func MeasureMemory(ctx context.Context, exe string, spec Subject, cfg Config) (*Memory, error) {
	m := &Memory{Method: "peak RSS (VmHWM of /proc/self/status) of a child worker process: same engine, a fresh store"}
	var err error
	if m.Suspended, err = child(ctx, exe, spec.Name, "suspended", cfg.MemSuspended); err != nil {
		return m, err
	}
	m.Inflight, err = child(ctx, exe, spec.Name, "inflight", cfg.MemBranches)
	return m, err
}

// ChildFlag marks a memory child's command line: exe ChildFlag world kind n.
const ChildFlag = "-bench-memory-child"

func child(ctx context.Context, exe, worldName, kind string, n int) (*MemSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, ChildFlag, worldName, kind, strconv.Itoa(n))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("memory child %s %s: %w: %s", worldName, kind, err, lastLine(errOut.String()))
	}
	var s MemSample
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &s); err != nil {
		return nil, fmt.Errorf("memory child %s %s: %w", worldName, kind, err)
	}
	return &s, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// RunChild is a memory child's main: args are the subject's name, kind
// ("suspended" or "inflight") and n. It prints one MemSample as JSON.
func RunChild(subjects []Subject, args []string, stdout io.Writer) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: %s subject suspended|inflight n", ChildFlag)
	}
	spec, ok := ByName(subjects, args[0])
	if !ok {
		return fmt.Errorf("unknown subject %q", args[0])
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, release, err := spec.Open(ctx)
	if err != nil {
		return err
	}
	defer release()
	s := &suite{ctx: ctx, e: e}

	time.Sleep(100 * time.Millisecond)
	sample := MemSample{}
	sample.BaselineKB, _ = procStatus()
	start := time.Now()
	switch args[1] {
	case "suspended":
		err = s.holdSuspended(n)
		sample.Runs = n
	case "inflight":
		err = s.holdInflight(n)
		sample.Runs, sample.Branches = 1, n
	default:
		err = fmt.Errorf("unknown memory benchmark %q", args[1])
	}
	if err != nil {
		return err
	}
	sample.SetupSeconds = time.Since(start).Seconds()
	if args[1] == "suspended" {
		time.Sleep(suspendedHold)
		sample.HoldSeconds = suspendedHold.Seconds()
	}
	sample.RSSKB, sample.PeakKB = procStatus()
	sample.Goroutines = runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	sample.HeapHeldKB = int64((ms.HeapSys - ms.HeapReleased) / 1024)
	sample.StackKB = int64(ms.StackInuse / 1024)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	sample.HeapInuseKB = int64(ms.HeapInuse / 1024)
	return json.NewEncoder(stdout).Encode(sample)
}

// holdSuspended starts n runs that each wait for a resume, and returns
// once all of them wait (and, for this SDK, the Worker has let them go).
func (s *suite) holdSuspended(n int) error {
	ids := make([]string, n)
	for i := range ids {
		st, err := s.startRun(func(ctx context.Context, id string) (Wait, error) { return s.e.Resumable(ctx, id, 1, 0) })
		if err != nil {
			return err
		}
		ids[i] = st.id
	}
	ctx, cancel := context.WithTimeout(s.ctx, 8*time.Minute)
	defer cancel()
	for _, id := range ids {
		if err := s.e.AwaitSuspended(ctx, id, 1); err != nil {
			return err
		}
	}
	if sdk, ok := s.e.(*sdkEngine); ok {
		for sdk.Busy() > 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return ctx.Err()
}

// holdInflight starts one fan-out of n branches and returns once all of
// them are running.
func (s *suite) holdInflight(n int) error {
	st, err := s.startRun(s.fan(n, 2*time.Second))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Minute)
	defer cancel()
	for i := 1; i <= n; i++ {
		if _, err := Samples.Wait(ctx, st.id, startKey(i)); err != nil {
			return err
		}
	}
	return nil
}
