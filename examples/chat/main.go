// Command chat runs a conversation as one long-lived workflow: each user
// message is a resume of the conversation's responding hook, and the
// assistant's answer streams back to that caller token by token, on a
// reply channel of its own, not on the run's stream that every reader
// sees.
//
//	go -C examples run ./chat
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/internal/exampleapp"
)

// Turn is a message of the conversation.
type Turn struct {
	Role string `json:"role"` // "user" or "assistant"
	Text string `json:"text"`
}

// Chat is shared by the workflow and the route that sends user messages.
// The reply is a Stream: the caller ranges over tokens as they come.
var Chat = workflow.DefineRespondingHook[string, workflow.Stream[string]]()

// answer is the step that calls the model and streams its answer to the
// user who asked. Respond returns once the whole answer is written.
var answer = workflow.DefineStep("chat.answer", func(ctx context.Context, in struct {
	Msg     workflow.HookMessage[string, workflow.Stream[string]]
	History []Turn
}) (string, error) {
	var full []string
	err := in.Msg.Respond(ctx, workflow.NewStream(func(yield func(string) bool) error {
		for tok := range model(in.History, in.Msg.Data) {
			full = append(full, tok)
			if !yield(tok) {
				return nil
			}
		}
		return nil
	}))
	return strings.Join(full, ""), err
})

// Conversation keeps the history and answers each message until "bye".
var Conversation = workflow.Define("chat.conversation", func(ctx workflow.Context, id string) ([]Turn, error) {
	hook := Chat.Create(ctx, workflow.WithToken("chat:"+id))
	var history []Turn
	for msg, err := range hook.All(ctx) {
		if err != nil {
			return history, err
		}
		reply, err := answer.Call(ctx, struct {
			Msg     workflow.HookMessage[string, workflow.Stream[string]]
			History []Turn
		}{msg, history})
		if err != nil {
			return history, err
		}
		history = append(history, Turn{"user", msg.Data}, Turn{"assistant", reply})
		if msg.Data == "bye" {
			break
		}
	}
	return history, nil
})

// model stands in for a language model: it streams a canned answer.
func model(history []Turn, prompt string) func(yield func(string) bool) {
	text := fmt.Sprintf("You said %q. That makes %d messages from you so far.", prompt, len(history)/2+1)
	if prompt == "bye" {
		text = "Goodbye!"
	}
	return func(yield func(string) bool) {
		for _, w := range strings.SplitAfter(text, " ") {
			time.Sleep(60 * time.Millisecond) // the model thinking
			if !yield(w) {
				return
			}
		}
	}
}

func main() {
	dir := flag.String("dir", ".workflow-data", "where the embedded World keeps its data")
	flag.Parse()

	app := exampleapp.Start(*dir)
	defer app.Close()
	ctx, client := app.Ctx, app.Client

	id := fmt.Sprintf("conv-%d", time.Now().UnixNano())
	run, err := workflow.Start(ctx, client, Conversation, id)
	if err != nil {
		log.Fatal(err)
	}
	token := "chat:" + id
	app.WaitForHook(token)

	// What a chat route does for each user message: resume the hook and
	// stream the reply into the response.
	for _, text := range []string{"hello", "what is a durable function?", "bye"} {
		fmt.Printf("user:      %s\nassistant: ", text)
		reply, err := Chat.Resume(ctx, client, token, text, workflow.WithReplyTimeout(time.Minute))
		if err != nil {
			log.Fatal(err)
		}
		for tok, err := range reply.All(ctx) {
			if err != nil {
				log.Fatal(err) // ErrReplyRestarted would mean: clear the line and keep reading
			}
			fmt.Print(tok)
		}
		fmt.Println()
	}
	history, err := run.Result(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nthe run kept %d turns of history\n", len(history))
}
