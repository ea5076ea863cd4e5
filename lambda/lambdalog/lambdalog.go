// Package lambdalog is the log setup of the Lambda functions: JSON lines
// (slog.NewJSONHandler), which CloudWatch Logs Insights parses into
// fields, at the level the function's LoggingConfig sets, each line with
// the invocation's aws_request_id and the function's deployment.
//
// The level comes from AWS_LAMBDA_LOG_LEVEL, which Lambda sets from
// LoggingConfig.ApplicationLogLevel
// (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-advanced.html).
package lambdalog

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Keys of the attributes this package adds.
const (
	RequestID  = "aws_request_id"
	Deployment = "deployment"
)

// New returns a JSON logger writing to w, at the level of
// AWS_LAMBDA_LOG_LEVEL (Info if unset), that adds each line's
// aws_request_id from its context, and the function's name and version as
// deployment when Lambda runs it.
func New(w io.Writer) *slog.Logger {
	level := Level(os.Getenv("AWS_LAMBDA_LOG_LEVEL"))
	h := WithRequestID(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	if name := lambdacontext.FunctionName; name != "" {
		h = h.WithAttrs([]slog.Attr{slog.String(Deployment, name+":"+lambdacontext.FunctionVersion)})
	}
	return slog.New(h)
}

// Setup makes New(os.Stdout) the default logger and returns it. Lambda
// sends a function's standard output to CloudWatch Logs.
func Setup() *slog.Logger {
	l := New(os.Stdout)
	slog.SetDefault(l)
	return l
}

// Level reads a Lambda log level (TRACE, DEBUG, INFO, WARN, ERROR, FATAL);
// anything else is Info.
func Level(s string) slog.Level {
	switch strings.ToUpper(s) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR", "FATAL":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// WithRequestID wraps h to add aws_request_id to every line whose context
// is (derived from) a Lambda invocation's.
func WithRequestID(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r = r.Clone()
		r.AddAttrs(slog.String(RequestID, lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
