// Command api is the API function of the examples' stack
// (examples/aws/template.yaml): the example order API (examples/lambdaapp)
// behind API Gateway or a Function URL, as the template's ExampleApi says.
// It starts runs and resumes their responding hooks; it runs no workflow
// code itself.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/lambdaworkflow/workflow/examples/lambdaapp"
	"github.com/lambdaworkflow/workflow/functions/coldstart"
	"github.com/lambdaworkflow/workflow/otel"
)

func main() {
	client, cfg := coldstart.Client("api")
	token, err := bearerToken(context.Background(), secretsmanager.NewFromConfig(cfg), os.Getenv("API_BEARER_TOKEN_SECRET"))
	if err != nil {
		slog.Error("api: no bearer token", "err", err)
		os.Exit(1)
	}
	api := lambdaapp.API(client, token)
	lambda.Start(func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		defer func() { _ = otel.Flush(context.WithoutCancel(ctx)) }()
		return api(ctx, req)
	})
}
