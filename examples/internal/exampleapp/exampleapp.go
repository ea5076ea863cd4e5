// Package exampleapp is what the hook examples share: the embedded World,
// a worker serving it, a client, and waiting for a freshly started run's
// hook to exist.
package exampleapp

import (
	"context"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

// App is a running example: Ctx ends on interrupt.
type App struct {
	Ctx    context.Context
	Client *workflow.Client
	stop   func()
}

// Start opens the embedded World in dir and starts a worker on it.
func Start(dir string) *App {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	w, err := local.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	worked := make(chan error)
	go func() { worked <- workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx) }()
	return &App{
		Ctx:    ctx,
		Client: workflow.NewClient(w),
		// Let the worker finish before the World closes under it.
		stop: func() { cancel(); <-worked; w.Close() },
	}
}

// Close stops the worker and closes the World.
func (a *App) Close() { a.stop() }

// WaitForHook waits until a hook holds token: the run that creates it was
// started a moment ago.
func (a *App) WaitForHook(token string) {
	for _, err := a.Client.GetHook(a.Ctx, token); err != nil; _, err = a.Client.GetHook(a.Ctx, token) {
		if a.Ctx.Err() != nil {
			log.Fatal(a.Ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
