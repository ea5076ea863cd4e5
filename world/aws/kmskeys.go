package aws

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
)

// KMSKeys is the payload KeyProvider on AWS (codec.KeyProvider): envelope
// encryption with AWS KMS. Each run's data key comes from one
// GenerateDataKey under the configured key, and is stored with the run as
// the key's ARN and the ciphertext KMS returned; a reader unwraps it with
// one Decrypt, which the codec.Chain caches. Both calls bind the data key
// to its run with the encryption context {"workflow:runId": run ID}, so a
// wrapped key copied to another run does not decrypt there (and
// CloudTrail names the run of every Decrypt).
//
// Rotation: KMS's automatic rotation keeps the key's ARN and its old
// material, so nothing changes here. Moving to another key is changing
// the configured key: new runs use it, and old runs still decrypt under
// the key their ARN names, as long as the role may still call Decrypt
// on it.
type KMSKeys struct {
	client    *kms.Client
	keyID     string
	generated atomic.Int64
	decrypted atomic.Int64
}

// PayloadKeyEnv names the KMS key (ARN, alias ARN or key ID) whose data
// keys encrypt new runs' payloads; the template sets it on every function.
const PayloadKeyEnv = "WORKFLOW_PAYLOAD_KMS_KEY"

// NewKMSKeys returns a KeyProvider on the KMS key keyID, with the SDK
// config's region, credentials and endpoint.
func NewKMSKeys(cfg aws.Config, keyID string) *KMSKeys {
	return &KMSKeys{client: kms.NewFromConfig(cfg, func(o *kms.Options) { o.Retryer = newRetryer() }), keyID: keyID}
}

// PayloadCodecFromEnv returns the payload codec chain the functions use:
// Zstandard and KMS envelope encryption under the key PayloadKeyEnv
// names, or nil (plain runs) if it is not set.
func PayloadCodecFromEnv(cfg aws.Config) *codec.Chain {
	key := os.Getenv(PayloadKeyEnv)
	if key == "" {
		return nil
	}
	return codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}, Keys: NewKMSKeys(cfg, key)})
}

// runContext is the encryption context of a run's data key.
func runContext(runID string) map[string]string { return map[string]string{"workflow:runId": runID} }

// Name is "kms".
func (k *KMSKeys) Name() string { return "kms" }

// GenerateKey asks KMS for a 256-bit data key for runID.
func (k *KMSKeys) GenerateKey(ctx context.Context, runID string) (codec.DataKey, error) {
	k.generated.Add(1)
	out, err := k.client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: aws.String(k.keyID), KeySpec: kmstypes.DataKeySpecAes256, EncryptionContext: runContext(runID),
	})
	if err != nil {
		return codec.DataKey{}, fmt.Errorf("kms GenerateDataKey under %s: %w", k.keyID, err)
	}
	arn := aws.ToString(out.KeyId)
	if arn == "" || strings.ContainsAny(arn, " \t\n") {
		return codec.DataKey{}, fmt.Errorf("kms GenerateDataKey under %s: the answer names no usable key ARN (%q)", k.keyID, arn)
	}
	return codec.DataKey{Plaintext: out.Plaintext, Wrapped: arn + " " + base64.RawStdEncoding.EncodeToString(out.CiphertextBlob)}, nil
}

// DecryptKey asks KMS to decrypt a run's data key, under the key whose
// ARN the wrapped key names.
func (k *KMSKeys) DecryptKey(ctx context.Context, runID, wrapped string) ([]byte, error) {
	arn, b64, ok := strings.Cut(wrapped, " ")
	blob, err := base64.RawStdEncoding.DecodeString(b64)
	if !ok || err != nil {
		return nil, errors.New("wrapped data key is malformed")
	}
	k.decrypted.Add(1)
	out, err := k.client.Decrypt(ctx, &kms.DecryptInput{KeyId: aws.String(arn), CiphertextBlob: blob, EncryptionContext: runContext(runID)})
	if err != nil {
		return nil, fmt.Errorf("kms Decrypt under %s: %w", arn, err)
	}
	return out.Plaintext, nil
}

// Requests returns how many GenerateDataKey and Decrypt calls the
// provider has made: the codec.Chain's cache keeps Decrypt to one per run
// and process.
func (k *KMSKeys) Requests() (generated, decrypted int64) {
	return k.generated.Load(), k.decrypted.Load()
}

var _ codec.KeyProvider = (*KMSKeys)(nil)
