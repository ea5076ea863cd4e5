// Command bench runs the Workflow SDK's benchmark suite
// (https://useworkflow.dev/docs/performance) on every World of this SDK and
// on its peers, DBOS Transact Go and go-workflows, one after the other in
// this process: time to first step, step-to-step overhead (also 1,000
// steps into a run), fan-out, time to resume, chunk trip time, and a
// worker's peak memory. It prints each metric per World and peer, and the
// ratio of each World to each peer.
//
//	make bench                                   # quick mode, everything available
//	go -C bench/peers run ./cmd/bench -full      # the SDK's methodology (long)
//	go -C bench/peers run ./cmd/bench -worlds local,local-fullsync,dbos,go-workflows
//
// It writes one JSON file per World and peer, the table and an overview
// chart to -out. The AWS World runs when MiniStack answers on
// http://127.0.0.1:4566 (make emulator starts it); a subject that cannot
// run is skipped with its reason.
package main

import (
	"github.com/lambdaworkflow/workflow/bench"
	"github.com/lambdaworkflow/workflow/bench/peers"
)

func main() { bench.Main(append(bench.Worlds(), peers.Subjects()...)) }
