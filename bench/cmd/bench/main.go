// Command bench runs the Workflow SDK's benchmark suite
// (https://useworkflow.dev/docs/performance) on every World:
// time to first step, step-to-step overhead (also 1,000 steps into a run),
// fan-out, time to resume, chunk trip time, and a worker's peak memory.
//
//	go -C bench run ./cmd/bench            # quick mode, every World available
//	go -C bench run ./cmd/bench -full      # the SDK's methodology (long)
//	go -C bench run ./cmd/bench -worlds local,local-fullsync
//
// It prints a table, writes one JSON file per World to -out and draws an
// overview chart there. The AWS World runs when MiniStack answers on
// http://127.0.0.1:4566 (make emulator starts it); a World that cannot
// run is skipped with its reason.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow/bench"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == bench.ChildFlag {
		if err := bench.RunChild(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var (
		full   = flag.Bool("full", false, "the Workflow SDK's methodology: 100 ms of work per step, its run counts, the stream in real time (takes an hour or more)")
		worlds = flag.String("worlds", "memory,local,local-fullsync,aws", "comma-separated Worlds to run")
		out    = flag.String("out", "results", "directory for the JSON results and the chart")
		noMem  = flag.Bool("nomem", false, "skip the memory benchmarks")
		report = flag.Bool("report", false, "run nothing: print the table and draw the chart from the JSON results in -out")
	)
	flag.Parse()
	cfg := bench.Quick()
	if *full {
		cfg = bench.Full()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

	var results []*bench.Result
	if *report {
		for _, name := range strings.Split(*worlds, ",") {
			r, err := bench.ReadJSON(*out, strings.TrimSpace(name), cfg.Mode)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				continue
			}
			results = append(results, r)
		}
		*worlds = ""
	}
	for _, name := range strings.Split(*worlds, ",") {
		if name == "" {
			continue
		}
		spec, ok := bench.WorldByName(strings.TrimSpace(name))
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown world %q\n", name)
			os.Exit(2)
		}
		logf("%s (%s mode):", spec.Name, cfg.Mode)
		r := bench.Run(ctx, spec, cfg, logf)
		if r.Skipped != "" {
			logf("  skipped: %s", r.Skipped)
		} else if !*noMem {
			start := time.Now()
			m, err := bench.MeasureMemory(ctx, exe, spec, cfg)
			r.Memory = m
			if err != nil {
				r.Notes = append(r.Notes, "memory: "+err.Error())
				logf("  memory: FAILED: %v", err)
			} else {
				logf("  memory: %.1fs", time.Since(start).Seconds())
			}
		}
		results = append(results, r)
		path, err := bench.WriteJSON(*out, r)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		logf("  wrote %s", path)
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Println()
	bench.WriteTable(os.Stdout, results)
	chart := filepath.Join(*out, "overview."+cfg.Mode+".png")
	title := fmt.Sprintf("Workflow for Go, Workflow SDK benchmarks (%s mode): p75 per World", cfg.Mode)
	if err := bench.WriteChart(chart, results, title); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("\nchart: %s\n", chart)
}
