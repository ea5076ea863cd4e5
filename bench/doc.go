// Package bench measures the metrics of the Workflow SDK's benchmarks
// (https://useworkflow.dev/docs/performance) on this SDK's Worlds: time to
// first step, step-to-step overhead, fan-out, time to resume, chunk trip
// time and a worker's memory. Command bench/cmd/bench runs the suite and
// writes its results; README.md says what each clock measures.
package bench
