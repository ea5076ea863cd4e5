package agent_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
	"github.com/lambdaworkflow/workflow/world/memory"
)

type seatQuestion struct {
	Options []string `json:"options" jsonschema:"the seats to choose from"`
}

type seatChoice struct {
	Seat string `json:"seat"`
}

// Validate holds a choice to what its schema cannot say.
func (c seatChoice) Validate() error {
	if c.Seat == "" {
		return errors.New("choose a seat")
	}
	return nil
}

var chooseSeat = agent.NewInterrupt[seatQuestion, seatChoice]("choose_seat", "Ask the traveller to choose a seat")

var seating = agent.New("example.seating", agenttest.New(
	agenttest.Answer("Which seat?", agenttest.Call("call-seat", "choose_seat", seatQuestion{[]string{"3A", "3C"}})),
	agenttest.Answer("Seat 3A it is."),
), agent.WithInterrupts(chooseSeat))

var seatFlow = workflow.Define("example.seating", func(ctx workflow.Context, prompt string) (*agent.Result, error) {
	return seating.Run(ctx, []agent.Message{agent.UserMessage(prompt)})
})

// The model chooses an interrupt; a UI reads the request from the hook
// the tool call's ID names and answers it, and the loop goes on.
func ExampleNewInterrupt() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	w := memory.New()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, seatFlow, "pick me a seat")
	if err != nil {
		panic(err)
	}
	q, err := chooseSeat.Request(ctx, c, "call-seat")
	for wait := time.Millisecond; errors.Is(err, workflow.ErrHookNotFound); wait *= 2 {
		time.Sleep(wait) // the run has not reached the interrupt yet
		q, err = chooseSeat.Request(ctx, c, "call-seat")
	}
	fmt.Println("asked to choose from", q.Options, err)
	fmt.Println(chooseSeat.Respond(ctx, c, "call-seat", seatChoice{})) // refused, nothing sent
	if err := chooseSeat.Respond(ctx, c, "call-seat", seatChoice{Seat: "3A"}); err != nil {
		panic(err)
	}
	res, err := run.Result(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, string(res.Interrupts[0].Response))
	// Output:
	// asked to choose from [3A 3C] <nil>
	// agent: the response does not match interrupt "choose_seat": choose a seat
	// Seat 3A it is. {"seat":"3A"}
}

type card struct {
	Title string   `json:"title" agent:"stream"`
	Lines []string `json:"lines" agent:"stream"`
	Total int      `json:"total"`
}

var carder = agent.NewOutput[card]("example.card", agenttest.New([]agent.Delta{
	{Text: `{"title": "Your `}, {Text: `trip", "lines": ["SFO→JFK",`}, {Text: ` "hotel"], "total": 640}`},
}))

var cardFlow = workflow.Define("example.card", func(ctx workflow.Context, prompt string) (card, error) {
	res, err := carder.Generate(ctx, []agent.Message{agent.UserMessage(prompt)})
	if err != nil {
		return card{}, err
	}
	return res.Value, nil
})

// A structured output streams its tagged fields as the model writes
// them, then the validated object.
func ExampleNewOutput() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	w := memory.New()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, workflow.NewClient(w), cardFlow, "summarise my trip")
	if err != nil {
		panic(err)
	}
	for p, err := range workflow.ReadStream[agent.Part](ctx, run, agent.DefaultNamespace, 0) {
		if err != nil {
			panic(err)
		}
		if p.Type == agent.PartData {
			fmt.Println(p.Data.Kind, p.Data.Path, string(p.Data.Value))
		}
	}
	// Output:
	// text-delta title "Your "
	// text-delta title "trip"
	// append lines ["SFO→JFK"]
	// append lines ["hotel"]
	// final  {"title":"Your trip","lines":["SFO→JFK","hotel"],"total":640}
}
