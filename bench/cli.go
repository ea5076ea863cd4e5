package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

// Main is the benchmark command's main over subjects (this SDK's Worlds
// and the peers): it runs the suite on each subject named by -worlds in
// turn, in this one process, then prints the table with the ratio of each
// World to each peer, writes it and one JSON file per subject to -out and
// draws the overview chart there. A subject that cannot run is skipped
// with its reason. It is also the memory benchmark's child process.
func Main(subjects []Subject) {
	if len(os.Args) > 1 && os.Args[1] == ChildFlag {
		if err := RunChild(subjects, os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var names []string
	for _, s := range subjects {
		names = append(names, s.Name)
	}
	var (
		full    = flag.Bool("full", false, "the Workflow SDK's methodology: 100 ms of work per step, its run counts, the stream in real time (takes an hour or more)")
		history = flag.Bool("history", false, "only the resume after 10, 1,000 and 10,000 events (results/<world>.history.json)")
		worlds  = flag.String("worlds", strings.Join(names, ","), "comma-separated Worlds and peers to run")
		out     = flag.String("out", "results", "directory for the JSON results, the table and the chart")
		noMem   = flag.Bool("nomem", false, "skip the memory benchmarks")
		report  = flag.Bool("report", false, "run nothing: print the table and draw the chart from the JSON results in -out")
	)
	flag.Parse()
	cfg := Quick()
	switch {
	case *full:
		cfg = Full()
	case *history:
		cfg, *noMem = History(), true
	}
	if err := runMain(subjects, cfg, strings.Split(*worlds, ","), *out, *noMem, *report); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func runMain(subjects []Subject, cfg Config, names []string, out string, noMem, report bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	var results []*Result
	for _, name := range names {
		name = strings.TrimSpace(name)
		if report {
			if r, err := ReadJSON(out, name, cfg.Mode); err != nil {
				fmt.Fprintln(os.Stderr, err)
			} else {
				results = append(results, r)
			}
			continue
		}
		spec, ok := ByName(subjects, name)
		if !ok {
			return fmt.Errorf("unknown world or peer %q", name)
		}
		r := runSubject(ctx, exe, spec, cfg, noMem, logf)
		results = append(results, r)
		path, err := WriteJSON(out, r)
		if err != nil {
			return err
		}
		logf("  wrote %s", path)
		if ctx.Err() != nil {
			break
		}
	}
	var table bytes.Buffer
	WriteTable(io.MultiWriter(os.Stdout, &table), results)
	if err := os.WriteFile(filepath.Join(out, "table."+cfg.Mode+".txt"), table.Bytes(), 0o644); err != nil {
		return err
	}
	if cfg.Mode == History().Mode {
		return nil // the chart's rows are the other benchmarks'
	}
	chart := filepath.Join(out, "overview."+cfg.Mode+".png")
	title := fmt.Sprintf("Workflow for Go and its peers, the Workflow SDK's benchmarks (%s mode): p75", cfg.Mode)
	if err := WriteChart(chart, results, title); err != nil {
		return err
	}
	fmt.Printf("\nchart: %s\n", chart)
	return nil
}

// runSubject runs the suite and, unless noMem, the memory children on one
// subject.
func runSubject(ctx context.Context, exe string, spec Subject, cfg Config, noMem bool, logf func(string, ...any)) *Result {
	logf("%s (%s mode):", spec.Name, cfg.Mode)
	r := Run(ctx, spec, cfg, logf)
	if r.Skipped != "" {
		logf("  skipped: %s", r.Skipped)
		return r
	}
	if noMem {
		return r
	}
	start := time.Now()
	m, err := MeasureMemory(ctx, exe, spec, cfg)
	r.Memory = m
	if err != nil {
		r.Notes = append(r.Notes, "memory: "+err.Error())
		logf("  memory: FAILED: %v", err)
	} else {
		logf("  memory: %.1fs", time.Since(start).Seconds())
	}
	return r
}
