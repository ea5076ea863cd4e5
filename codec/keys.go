package codec

import (
	"context"
	"crypto/cipher"
	"sync"
)

// KeyProvider makes and unwraps the data keys of encrypted runs (envelope
// encryption): each run's payloads are encrypted under a random data key,
// which is stored with the run wrapped by a key the provider keeps (a
// local master key, a KMS key). The wrapped key is no secret; the master
// key is.
type KeyProvider interface {
	// Name identifies the provider in the wrapped keys it makes ("local",
	// "kms"): one word.
	Name() string
	// GenerateKey makes the data key of a new run: 32 random bytes, and
	// their wrapped form, stored with the run: text without line breaks,
	// the ID of the wrapping key then a space then the wrapped bytes, if
	// the provider has key IDs.
	GenerateKey(ctx context.Context, runID string) (DataKey, error)
	// DecryptKey unwraps what GenerateKey made for runID, under whichever
	// of its keys made it (keys rotate: old runs still decrypt).
	DecryptKey(ctx context.Context, runID, wrapped string) ([]byte, error)
}

// DataKey is a run's data key.
type DataKey struct {
	Plaintext []byte
	Wrapped   string
}

// keyCache keeps unwrapped data keys (as ready ciphers) by run and
// wrapped key, at most max of them: past the bound it forgets the oldest.
type keyCache struct {
	mu    sync.Mutex
	max   int
	keys  map[string]cipher.AEAD
	order []string // insertion order, for eviction
}

func newKeyCache(max int) *keyCache {
	if max <= 0 {
		max = 4096
	}
	return &keyCache{max: max, keys: map[string]cipher.AEAD{}}
}

func (k *keyCache) get(key string) cipher.AEAD {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys[key]
}

func (k *keyCache) put(key string, a cipher.AEAD) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.keys[key]; ok {
		return
	}
	if len(k.order) >= k.max {
		delete(k.keys, k.order[0])
		k.order = k.order[1:]
	}
	k.keys[key] = a
	k.order = append(k.order, key)
}
