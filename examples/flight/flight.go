// Package flight is a flight-booking agent in a multi-turn chat session:
// it searches flights, holds a seat, watches the price for a day, and
// books only once a person approves. The tools are fakes with fixed
// data; the model is the scripted one of agent/agenttest unless a program
// gives it another with [UseModel] (Bedrock, say).
//
// cmd/flight runs it on the embedded World (make flight); examples/devserver
// serves it beside the example application.
package flight

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/chat"
)

// PriceWatch is how long watch_price waits before it looks at the price
// again. A program may shorten it before any run starts (cmd/flight's
// -watch flag); a run records the wait's end when it starts it.
var PriceWatch = 24 * time.Hour

// Search is search_flights' input.
type Search struct {
	From string `json:"from" jsonschema:"departure airport, IATA code"`
	To   string `json:"to" jsonschema:"arrival airport, IATA code"`
	Date string `json:"date" jsonschema:"day of departure, YYYY-MM-DD"`
}

// Offer is a flight on sale.
type Offer struct {
	Flight string `json:"flight"`
	Depart string `json:"depart,omitempty"`
	Price  int    `json:"price"` // US dollars
}

// Hold is a seat held at a price.
type Hold struct {
	ID     string `json:"id"`
	Flight string `json:"flight"`
	Price  int    `json:"price"`
}

// Booking is a confirmed booking.
type Booking struct {
	Confirmation string `json:"confirmation"`
	Flight       string `json:"flight"`
	Passenger    string `json:"passenger"`
	Price        int    `json:"price"`
}

var searchFlights = agent.NewTool("search_flights", "Find flights between two airports on a day",
	func(ctx context.Context, in Search, _ agent.ToolCallInfo) ([]Offer, error) {
		return []Offer{{"UA415", in.Date + "T07:05", 318}, {"DL212", in.Date + "T09:40", 342}}, nil
	})

var holdSeat = agent.NewTool("hold_seat", "Hold a seat on a flight at today's price",
	func(ctx context.Context, in struct {
		Flight string `json:"flight"`
	}, _ agent.ToolCallInfo) (Hold, error) {
		return Hold{ID: "H-" + in.Flight, Flight: in.Flight, Price: 318}, nil
	})

// checkPrice is the fare lookup after the watch: a step, since it is I/O.
var checkPrice = workflow.DefineStep("flight.check_price", func(ctx context.Context, flight string) (int, error) {
	return 289, nil
})

// watchPrice is a workflow-level tool: it sleeps, which costs nothing
// while it waits, then looks again.
var watchPrice = agent.NewWorkflowTool("watch_price", "Wait a day, then report the flight's price",
	func(ctx workflow.Context, in struct {
		Flight string `json:"flight"`
	}, _ agent.ToolCallInfo) (Offer, error) {
		workflow.Sleep(ctx, PriceWatch)
		price, err := checkPrice.Call(ctx, in.Flight)
		return Offer{Flight: in.Flight, Price: price}, err
	})

var bookFlight = agent.NewTool("book_flight", "Book the held seat for a passenger; a person approves first",
	func(ctx context.Context, in struct {
		Hold      string `json:"hold"`
		Passenger string `json:"passenger"`
		Price     int    `json:"price"`
	}, call agent.ToolCallInfo) (Booking, error) {
		return Booking{Confirmation: "CONF-" + in.Hold[len("H-"):], Flight: in.Hold[len("H-"):], Passenger: in.Passenger, Price: in.Price}, nil
	}, agent.NeedsApproval())

// Assistant is the booking agent.
var Assistant = agent.New("flight", model,
	agent.WithSystem("You book flights. Search, hold the best seat, watch its price for a day, then book it once the traveller approves."),
	agent.WithTools(searchFlights, holdSeat, watchPrice, bookFlight))

// Session is the booking conversation: one run per traveller's chat.
var Session = chat.NewSession(Assistant)

// Handler serves the session under /flight/sessions and the approvals
// under /flight/approvals.
func Handler(c *workflow.Client) http.Handler {
	mux := http.NewServeMux()
	sessions := Session.Handler(c, "/flight/sessions")
	mux.Handle("/flight/sessions", sessions)
	mux.Handle("/flight/sessions/", sessions)
	mux.Handle("/flight/approvals/", chat.ApprovalHandler(c, "/flight/approvals"))
	return mux
}

// model is the model the agent calls: Scripted() until UseModel.
var model = &switchable{m: Scripted()}

// UseModel makes the agent call m, before any run starts.
func UseModel(m agent.Model) {
	model.mu.Lock()
	defer model.mu.Unlock()
	model.m = m
}

type switchable struct {
	mu sync.Mutex
	m  agent.Model
}

func (s *switchable) Stream(ctx context.Context, req agent.Request) iter.Seq2[agent.Delta, error] {
	s.mu.Lock()
	m := s.m
	s.mu.Unlock()
	return m.Stream(ctx, req)
}

// Describe renders a part of the stream for a terminal: a text delta as
// it is (inline), a message or a tool call or result as a line of its
// own, and "" for what a reader does not show.
func Describe(p agent.Part) (text string, inline bool) {
	switch p.Type {
	case agent.PartTextDelta:
		return p.Text, true
	case agent.PartMessage:
		return fmt.Sprintf("[%s] %s", p.From, p.Text), false
	case agent.PartToolCall:
		wait := ""
		if p.NeedsApproval {
			wait = " (waits for approval)"
		}
		return fmt.Sprintf("  → %s %s%s", p.ToolCall.Name, p.ToolCall.Input, wait), false
	case agent.PartToolResult:
		return fmt.Sprintf("  ← %s %s: %s", p.ToolResult.Name, p.ToolResult.Outcome, p.ToolResult.Content()), false
	}
	return "", true
}
