// Command validate shows validation at the door: the workflow inspects
// each submission and tells its sender at once whether it was accepted,
// with the problems if not, instead of accepting everything and failing
// invisibly later. The run keeps taking submissions until one is valid.
//
//	go -C examples run ./validate
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/mail"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/examples/internal/exampleapp"
)

// Signup is what applicants submit.
type Signup struct {
	Email string `json:"email"`
	Age   int    `json:"age"`
}

// Receipt is the workflow's answer to a submission.
type Receipt struct {
	Accepted bool     `json:"accepted"`
	Problems []string `json:"problems,omitempty"`
	ID       string   `json:"id,omitempty"`
}

// Intake is shared by the workflow and the route that submits.
var Intake = workflow.DefineRespondingHook[Signup, Receipt]()

// problems is the validation. It runs in workflow code: it is pure.
func problems(s Signup) []string {
	var out []string
	if _, err := mail.ParseAddress(s.Email); err != nil {
		out = append(out, fmt.Sprintf("email %q is not an address", s.Email))
	}
	if s.Age < 18 {
		out = append(out, fmt.Sprintf("age %d is under 18", s.Age))
	}
	return out
}

var enqueue = workflow.DefineStep("validate.enqueue", func(ctx context.Context, s Signup) (string, error) {
	info, _ := workflow.GetStepInfo(ctx)
	return "signup-" + info.RunID[len(info.RunID)-6:], nil // the signup system's ID
})

// reply answers one submission; replies are sent from steps.
var reply = workflow.DefineStep("validate.reply", func(ctx context.Context, in struct {
	Msg     workflow.HookMessage[Signup, Receipt]
	Receipt Receipt
}) (struct{}, error) {
	return struct{}{}, in.Msg.Respond(ctx, in.Receipt)
})

func send(ctx workflow.Context, msg workflow.HookMessage[Signup, Receipt], r Receipt) error {
	_, err := reply.Call(ctx, struct {
		Msg     workflow.HookMessage[Signup, Receipt]
		Receipt Receipt
	}{msg, r})
	return err
}

// Application takes submissions until one is valid, and returns its ID.
var Application = workflow.Define("validate.application", func(ctx workflow.Context, id string) (string, error) {
	intake := Intake.Create(ctx, workflow.WithToken("intake:"+id))
	for msg, err := range intake.All(ctx) {
		if err != nil {
			return "", err
		}
		if p := problems(msg.Data); len(p) > 0 {
			if err := send(ctx, msg, Receipt{Problems: p}); err != nil {
				return "", err
			}
			continue
		}
		signupID, err := enqueue.Call(ctx, msg.Data)
		if err != nil {
			return "", err
		}
		return signupID, send(ctx, msg, Receipt{Accepted: true, ID: signupID})
	}
	return "", fmt.Errorf("intake closed")
})

func main() {
	dir := flag.String("dir", ".workflow-data", "where the embedded World keeps its data")
	flag.Parse()

	app := exampleapp.Start(*dir)
	defer app.Close()
	ctx, client := app.Ctx, app.Client

	id := fmt.Sprintf("app-%d", time.Now().UnixNano())
	run, err := workflow.Start(ctx, client, Application, id)
	if err != nil {
		log.Fatal(err)
	}
	token := "intake:" + id
	app.WaitForHook(token)

	for _, s := range []Signup{{Email: "not an email", Age: 12}, {Email: "kid@example.com", Age: 17}, {Email: "ada@example.com", Age: 36}} {
		r, err := Intake.Resume(ctx, client, token, s, workflow.WithReplyTimeout(time.Minute))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("submitted %+v\n  -> %+v\n", s, r)
	}
	signupID, err := run.Result(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the run ended with", signupID)
}
