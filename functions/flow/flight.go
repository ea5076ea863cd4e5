package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/lambdaworkflow/workflow/agent/bedrock"
	"github.com/lambdaworkflow/workflow/examples/flight"
)

// useFlightModel makes the flight agent (examples/flight) call Bedrock
// model modelID (the template's FlightModelId), through endpoint if it is
// not empty (FlightBedrockEndpoint). Without a model ID the agent keeps
// its scripted stand-in.
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
