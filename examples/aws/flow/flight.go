package main

import (
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/lambdaworkflow/workflow/agent/bedrock"
	"github.com/lambdaworkflow/workflow/examples/flight"
)

// readSettings reads the World stack's FlowSettings, a URL query:
// model=<Bedrock model ID>, the flight agent's (the examples' stack grants
// the function its FlightModelId), and bedrock-endpoint=<URL>, where to
// call it (empty: the region's, or the emulator's).
func readSettings(s string) (url.Values, error) {
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("not a URL query (model=...&bedrock-endpoint=...): %w", err)
	}
	return v, nil
}

// useFlightModel makes the flight agent (examples/flight) call Bedrock
// model modelID, through endpoint if it is not empty. Without a model ID
// the agent keeps its scripted stand-in.
func useFlightModel(cfg aws.Config, modelID, endpoint string) {
	if modelID == "" {
		return
	}
	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	flight.UseModel(bedrock.New(client, modelID))
}
