package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// bearerToken reads the API's bearer token from the Secrets Manager secret
// secretID (API_BEARER_TOKEN_SECRET, the template's ApiToken), so that the
// token is in neither the function's configuration nor its template. Read
// once per cold start: a rotated token reaches the instances started since.
func bearerToken(ctx context.Context, client *secretsmanager.Client, secretID string) (string, error) {
	if secretID == "" {
		return "", fmt.Errorf("API_BEARER_TOKEN_SECRET is not set")
	}
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &secretID})
	if err != nil {
		return "", fmt.Errorf("reading the bearer token from %s: %w", secretID, err)
	}
	if aws.ToString(out.SecretString) == "" {
		return "", fmt.Errorf("secret %s holds no string", secretID)
	}
	return *out.SecretString, nil
}
