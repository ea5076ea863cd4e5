package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Bootstrap and Teardown create and delete an Event API through AppSync's
// control plane (https://docs.aws.amazon.com/appsync/latest/APIReference/API_CreateApi.html),
// the way scripts/local.sh makes one for template.yaml's StreamEventsApiId:
// IAM authorization for connecting, publishing and subscribing, and one
// channel namespace.

// iamOnly is an Event API's eventConfig with AWS_IAM for everything.
var iamOnly = func() map[string]any {
	iam := []map[string]string{{"authType": "AWS_IAM"}}
	return map[string]any{"authProviders": iam, "connectionAuthModes": iam, "defaultPublishAuthModes": iam, "defaultSubscribeAuthModes": iam}
}()

// createEventAPI creates the Event API name with DefaultEventNamespace.
func createEventAPI(ctx context.Context, cfg aws.Config, name string) (EventAPI, error) {
	var created struct {
		API struct {
			ID  string `json:"apiId"`
			DNS struct {
				HTTP     string `json:"HTTP"`
				Realtime string `json:"REALTIME"`
			} `json:"dns"`
		} `json:"api"`
	}
	if err := controlPlane(ctx, cfg, http.MethodPost, "/v2/apis", map[string]any{"name": name, "eventConfig": iamOnly}, &created); err != nil {
		return EventAPI{}, err
	}
	api := EventAPI{HTTPDomain: created.API.DNS.HTTP, RealtimeDomain: created.API.DNS.Realtime, Namespace: DefaultEventNamespace}
	if err := controlPlane(ctx, cfg, http.MethodPost, "/v2/apis/"+created.API.ID+"/channelNamespaces", map[string]any{"name": api.Namespace}, nil); err != nil {
		_ = deleteEventAPI(ctx, cfg, api)
		return EventAPI{}, err
	}
	return api, nil
}

// deleteEventAPI deletes the API, its namespaces with it.
func deleteEventAPI(ctx context.Context, cfg aws.Config, api EventAPI) error {
	return controlPlane(ctx, cfg, http.MethodDelete, "/v2/apis/"+api.id(), nil, nil)
}

// id is the API's ID, the first label of its domains.
func (e EventAPI) id() string {
	id, _, _ := strings.Cut(e.HTTPDomain, ".")
	return id
}

// controlPlane sends a signed AppSync control-plane request and decodes
// its answer into out (unless nil).
func controlPlane(ctx context.Context, cfg aws.Config, method, path string, in, out any) error {
	endpoint := "https://appsync." + cfg.Region + ".amazonaws.com"
	if cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	target, err := url.JoinPath(endpoint, path)
	if err != nil {
		return err
	}
	var body []byte
	if in != nil {
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "appsync", cfg.Region, time.Now()); err != nil {
		return err
	}
	resp, err := awshttp.NewBuildableClient().Do(req)
	if err != nil {
		return fmt.Errorf("appsync %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("appsync %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("appsync %s %s: %s: %s", method, path, resp.Status, answer)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
