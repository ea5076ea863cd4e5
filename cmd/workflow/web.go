package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/lambdaworkflow/workflow/viewer"
)

func web(ctx context.Context, env *env, args []string) error {
	fs, wf := newFlags("web", env)
	addr := fs.String("addr", "127.0.0.1:8081", "address to serve the viewer on")
	allowCancel := fs.Bool("allow-cancel", false, "show a cancel button on unfinished runs (read-only without it)")
	var hosts []string
	fs.Func("allow-host", "a host name the viewer also answers to, besides loopback (repeatable; put your own authentication in front of it)", func(name string) error {
		hosts = append(hosts, name)
		return nil
	})
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := wf.open(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	opts := []viewer.Option{viewer.WithPayloadCodec(wf.codec), viewer.WithAllowedHosts(hosts...)}
	if *allowCancel {
		opts = append(opts, viewer.WithCancel())
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: viewer.New(w, opts...), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	mode := "read-only"
	if *allowCancel {
		mode = "runs can be cancelled"
	}
	fmt.Fprintf(env.out, "viewer on http://%s/ (%s); Ctrl-C stops\n", ln.Addr(), mode)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
