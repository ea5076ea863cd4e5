// Command agentcrash is the process the agent's kill -9 test kills: it
// serves an agent loop from an embedded World, its model Amazon Bedrock's
// ConverseStream over the real SDK client, sent to the test's fake
// provider, and journals every run of its tool, so the test can say
// where a kill landed.
//
//	agentcrash -dir DATA -journal FILE -endpoint URL [-start]
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/bedrock"
	"github.com/lambdaworkflow/workflow/internal/testrig/crashtest/journal"
	"github.com/lambdaworkflow/workflow/internal/testrig/emulator"
	"github.com/lambdaworkflow/workflow/world/local"
)

// RunID is the run the test starts and waits for.
const RunID = "billing"

// jour is where every step or tool attempt is noted.
var jour *journal.Journal

// slow journals its start and end; the gap is where a kill lands.
var slow = agent.NewTool("slow", "Do something slowly", func(ctx context.Context, in struct{ N int }, call agent.ToolCallInfo) (int, error) {
	jour.Note("tool start %d", in.N)
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	jour.Note("tool done %d", in.N)
	return in.N, nil
})

func main() {
	dir := flag.String("dir", "", "data directory")
	path := flag.String("journal", "", "journal file")
	endpoint := flag.String("endpoint", "", "the fake provider's URL")
	start := flag.Bool("start", false, "start the run, then serve")
	flag.Parse()
	var err error
	if jour, err = journal.Open(*path); err != nil {
		log.Fatal(err)
	}
	cfg := emulator.Config()
	cfg.BaseEndpoint = aws.String(*endpoint)
	model := bedrock.New(bedrockruntime.NewFromConfig(cfg), "amazon.nova-lite-v1:0")
	assistant := agent.New("crash", model, agent.WithTools(slow), agent.WithMaxSteps(10),
		agent.WithModelStepOptions(workflow.WithBackoff(func(int) time.Duration { return 50 * time.Millisecond })))
	loop := workflow.Define("agent.crash", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
		return assistant.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
	})
	w, err := local.Open(*dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if *start {
		if _, err := workflow.Start(ctx, workflow.NewClient(w), loop, "count to four slowly", workflow.WithRunID(RunID)); err != nil {
			log.Fatal(err)
		}
	}
	jour.Note("serving pid %d", os.Getpid())
	if err := workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx); err != nil {
		log.Fatal(err)
	}
}
