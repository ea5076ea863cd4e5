package flight

import (
	"github.com/lambdaworkflow/workflow/agent"
	"github.com/lambdaworkflow/workflow/agent/agenttest"
)

// The call IDs the scripted model gives its tool calls. A real model's
// IDs are unique; these are fixed, so run one scripted booking at a time
// per World (book's ID is its approval hook's token).
const (
	SearchCall = "call-search"
	HoldCall   = "call-hold"
	WatchCall  = "call-watch"
	BookCall   = "call-book"
)

// Scripted is a stand-in model that books UA415 for Ana Lima: search;
// hold and watch the price, side by side; book at the lower price; then
// confirm. Each answer is chosen by how far the conversation has got, so
// a replayed or retried call gets the same one.
func Scripted() agent.Model {
	return agenttest.New(
		agenttest.Answer("Let me look for flights from SFO to JFK on the 24th. ",
			agenttest.Call(SearchCall, "search_flights", Search{From: "SFO", To: "JFK", Date: "2026-12-24"})),
		agenttest.Answer("UA415 at 07:05 is the cheapest, $318. I'll hold a seat and watch the price for a day. ",
			agenttest.Call(HoldCall, "hold_seat", map[string]string{"flight": "UA415"}),
			agenttest.Call(WatchCall, "watch_price", map[string]string{"flight": "UA415"})),
		agenttest.Answer("The fare dropped to $289. Booking it for Ana Lima as soon as you approve. ",
			agenttest.Call(BookCall, "book_flight", map[string]any{"hold": "H-UA415", "passenger": "Ana Lima", "price": 289})),
		agenttest.Answer("You're booked on UA415, confirmation CONF-UA415, for $289. Have a good trip!"),
	)
}
