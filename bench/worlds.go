package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/internal/testrig/faultproxy"
	"github.com/lambdaworkflow/workflow/world"
	awsworld "github.com/lambdaworkflow/workflow/world/aws"
	"github.com/lambdaworkflow/workflow/world/local"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// callCounter is implemented by Worlds that count their API calls and
// DynamoDB request units (the AWS World): the suite reports them as the
// cost model.
type callCounter interface {
	Calls() map[string]int64
	Units() awsworld.RequestUnits
	ResetCalls()
}

// Worlds lists this SDK's Worlds the suite knows, in report order.
func Worlds() []Subject {
	return []Subject{
		{Name: "memory", Description: "world/memory: in-process maps, nothing durable", Open: openSDK(func(context.Context) (world.World, func(), error) {
			w := memory.New()
			return w, func() { w.Close() }, nil
		})},
		{Name: "local", Description: "world/local: SQLite, WAL, synchronous=NORMAL (default: survives kill -9, not power loss)", Open: openSDK(func(context.Context) (world.World, func(), error) {
			return openLocal(false)
		})},
		{Name: "local-fullsync", Description: "world/local with WithFullSync: SQLite, WAL, fsync before each acknowledgement (what it acknowledges survives power loss)", Open: openSDK(func(context.Context) (world.World, func(), error) {
			return openLocal(true)
		})},
		{Name: "aws", Description: "world/aws: DynamoDB + SQS + S3 (+ an AppSync Events API pushing stream writes to readers) on the MiniStack emulator at " + emulator.Endpoint, Open: openSDK(openAWS(false))},
		{
			Name:        "aws-inregion",
			Description: "world/aws on MiniStack behind a proxy that holds each call for an in-region latency (internal/testrig/faultproxy InRegion: TransactWriteItems 10 ms, PutItem/UpdateItem 5 ms, Query 3 ms, GetItem 2 ms, SQS 6 ms, an AppSync Events publish 10 ms at the median; stream readers subscribe over its WebSocket, passed unheld)",
			Open:        openSDK(openAWS(true)),
			FullLongRun: true,
			Targets:     InRegionTargets,
		},
	}
}

func openLocal(fullSync bool) (world.World, func(), error) {
	dir, err := os.MkdirTemp("", "workflow-bench-")
	if err != nil {
		return nil, nil, err
	}
	var opts []local.Option
	if fullSync {
		opts = append(opts, local.WithFullSync())
	}
	w, err := local.Open(dir, opts...)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return w, func() { w.Close(); os.RemoveAll(dir) }, nil
}

// ByName returns the subject named name.
func ByName(subjects []Subject, name string) (Subject, bool) {
	for _, s := range subjects {
		if s.Name == name {
			return s, true
		}
	}
	return Subject{}, false
}

// openAWS returns an opener that bootstraps a table, queue and bucket of
// its own on MiniStack and returns an AWS World on them, its calls held
// for in-region latencies by a proxy if inRegion; the release deletes
// them.
func openAWS(inRegion bool) func(ctx context.Context) (world.World, func(), error) {
	return func(ctx context.Context) (world.World, func(), error) {
		if err := emulator.Health(2 * time.Second); err != nil {
			return nil, nil, err
		}
		cfg := emulator.Config()
		name := "wf-bench-" + strings.ToLower(rand.Text()[:12])
		opts, err := awsworld.Bootstrap(ctx, cfg, awsworld.Names{Table: name, Queue: name, Bucket: name, EventAPI: name})
		if err != nil {
			return nil, nil, fmt.Errorf("bootstrap on MiniStack: %w", err)
		}
		via, stopProxy := cfg, func() {}
		var proxy *faultproxy.Proxy
		if inRegion {
			p, err := faultproxy.Start(context.WithoutCancel(ctx), emulator.Endpoint)
			if err != nil {
				teardownAWS(cfg, opts)
				return nil, nil, err
			}
			p.SetLatency(faultproxy.InRegion())
			via, stopProxy, proxy = cfg.Copy(), func() { _ = p.Close() }, p
			via.BaseEndpoint = aws.String(p.URL())
		}
		w, err := awsworld.New(via, opts)
		if err != nil {
			stopProxy()
			teardownAWS(cfg, opts)
			return nil, nil, err
		}
		release := func() { w.Close(); stopProxy(); teardownAWS(cfg, opts) }
		hops, err := timeQueueHops(ctx, w, queueHops)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("time the queue hop: %w", err)
		}
		return &hopTimed{World: w, hops: hops, proxy: proxy}, release, nil
	}
}

func teardownAWS(cfg aws.Config, opts awsworld.Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = awsworld.Teardown(ctx, cfg, opts)
}
