package main

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// apiGateway serves an API Gateway (payload format 2.0) handler on a
// ServeMux route, as API Gateway would: the request becomes the event the
// handler gets on AWS, its {id} path value a path parameter.
func apiGateway(route string, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		ev := events.APIGatewayV2HTTPRequest{
			Version:        "2.0",
			RouteKey:       route,
			RawPath:        r.URL.Path,
			RawQueryString: r.URL.RawQuery,
			Headers:        map[string]string{},
			Body:           string(body),
		}
		ev.RequestContext.HTTP.Method = r.Method
		ev.RequestContext.HTTP.Path = r.URL.Path
		if id := r.PathValue("id"); id != "" {
			ev.PathParameters = map[string]string{"id": id}
		}
		for k, vs := range r.Header {
			// API Gateway lower-cases header names and joins repeated ones.
			ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		resp, err := h(r.Context(), ev)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.StatusCode)
		io.WriteString(w, resp.Body)
	})
}
