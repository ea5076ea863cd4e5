package codec

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Keyring is the KeyProvider of a process that holds its master keys
// itself (the embedded World): AES-256 keys by ID, the first of which
// wraps the data keys of new runs. Rotating is putting a new key first and
// keeping the old ones: new runs use the new key, old runs still decrypt.
type Keyring struct {
	current string
	keys    map[string]cipher.AEAD
}

// The environment variables KeyringFromEnv reads.
const (
	// KeysEnv holds the keys themselves: "id:base64key,id:base64key",
	// the current key first.
	KeysEnv = "WORKFLOW_PAYLOAD_KEYS"
	// KeyFileEnv names a file of keys: one "id base64key" a line, the
	// current key first; blank lines and lines starting with # are skipped.
	KeyFileEnv = "WORKFLOW_PAYLOAD_KEY_FILE"
)

// ErrNoKeys says neither WORKFLOW_PAYLOAD_KEYS nor WORKFLOW_PAYLOAD_KEY_FILE is set.
var ErrNoKeys = errors.New("codec: no payload keys configured (" + KeysEnv + " or " + KeyFileEnv + ")")

// NewKeyring returns a Keyring of 32-byte keys by ID; current names the
// key new runs are wrapped with.
func NewKeyring(current string, keys map[string][]byte) (*Keyring, error) {
	k := &Keyring{current: current, keys: map[string]cipher.AEAD{}}
	for id, key := range keys {
		if id == "" || strings.ContainsAny(id, " \t\n,:") {
			return nil, fmt.Errorf("codec: key ID %q: it must be one word without ',' or ':'", id)
		}
		a, err := newAEAD(key)
		if err != nil {
			return nil, fmt.Errorf("codec: key %s: %w", id, err)
		}
		k.keys[id] = a
	}
	if k.keys[current] == nil {
		return nil, fmt.Errorf("codec: the current key %q is not in the keyring", current)
	}
	return k, nil
}

// KeyringFromEnv reads the keyring from WORKFLOW_PAYLOAD_KEYS or the file
// WORKFLOW_PAYLOAD_KEY_FILE names. ErrNoKeys says neither is set.
func KeyringFromEnv() (*Keyring, error) {
	if v := os.Getenv(KeysEnv); v != "" {
		return parseKeyring(strings.Split(v, ","), ":", KeysEnv)
	}
	if path := os.Getenv(KeyFileEnv); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("codec: %s: %w", KeyFileEnv, err)
		}
		return parseKeyring(strings.Split(string(b), "\n"), " ", path)
	}
	return nil, ErrNoKeys
}

func parseKeyring(lines []string, sep, source string) (*Keyring, error) {
	keys := map[string][]byte{}
	current := ""
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		id, b64, ok := strings.Cut(line, sep)
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if !ok || err != nil {
			return nil, fmt.Errorf("codec: %s: want \"id%sbase64key\" entries (the key is 32 bytes, base64)", source, sep)
		}
		if current == "" {
			current = id
		}
		keys[id] = key
	}
	if current == "" {
		return nil, fmt.Errorf("codec: %s holds no key", source)
	}
	return NewKeyring(current, keys)
}

// Name is "local".
func (k *Keyring) Name() string { return "local" }

// GenerateKey makes a random data key wrapped by the current key, bound
// to runID.
func (k *Keyring) GenerateKey(_ context.Context, runID string) (DataKey, error) {
	plain := make([]byte, 32)
	_, _ = rand.Read(plain)
	nonce := make([]byte, nonceSize)
	_, _ = rand.Read(nonce)
	sealed := k.keys[k.current].Seal(nonce, nonce, plain, []byte(runID))
	return DataKey{Plaintext: plain, Wrapped: k.current + " " + base64.RawStdEncoding.EncodeToString(sealed)}, nil
}

// DecryptKey unwraps a data key with the key whose ID it names.
func (k *Keyring) DecryptKey(_ context.Context, runID, wrapped string) ([]byte, error) {
	id, b64, _ := strings.Cut(wrapped, " ")
	master := k.keys[id]
	if master == nil {
		return nil, fmt.Errorf("the keyring has no key %q", id)
	}
	sealed, err := base64.RawStdEncoding.DecodeString(b64)
	if err != nil || len(sealed) < nonceSize+master.Overhead() {
		return nil, fmt.Errorf("wrapped data key is malformed")
	}
	plain, err := master.Open(nil, sealed[:nonceSize], sealed[nonceSize:], []byte(runID))
	if err != nil {
		return nil, fmt.Errorf("wrapped data key fails authentication under key %q (another run's, or altered)", id)
	}
	return plain, nil
}
