package codec

import (
	"crypto/cipher"
	"crypto/rand"
	"fmt"
)

// Run encodes and decodes the payloads of one run. It is safe for
// concurrent use.
type Run struct {
	chain  *Chain
	id     string
	aead   cipher.AEAD // nil: the run is not encrypted
	keyRef string
}

// Encrypted reports whether the run's payloads are encrypted.
func (r *Run) Encrypted() bool { return r.aead != nil }

// Encode encodes one payload of the run at place.
func (r *Run) Encode(place string, data []byte) ([]byte, error) {
	s := Scope{RunID: r.id, Place: place}
	var names []string
	if !r.chain.disabled {
		for _, c := range r.chain.codecs {
			out, applied, err := c.Encode(s, data)
			if err != nil {
				return nil, fmt.Errorf("codec %s: run %s, %s: %w", c.Name(), r.id, place, err)
			}
			if applied {
				data, names = out, append(names, c.Name())
			}
		}
	}
	h := header(names, r.aead != nil)
	if r.aead == nil {
		return append(h, data...), nil
	}
	out := make([]byte, len(h), len(h)+nonceSize+len(data)+r.aead.Overhead())
	copy(out, h)
	nonce := out[len(h) : len(h)+nonceSize]
	out = out[:len(h)+nonceSize]
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	return r.aead.Seal(out, nonce, data, additional(s, h)), nil
}

// Decode decodes one payload of the run at place. A payload that fails
// authentication is ErrTampered; one the run should not hold (plain, or
// unencrypted in an encrypted run) ErrCorrupt.
func (r *Run) Decode(place string, data []byte) ([]byte, error) {
	s := Scope{RunID: r.id, Place: place}
	names, encrypted, n, err := parseHeader(data)
	if err != nil {
		return nil, fmt.Errorf("run %s, %s: %w", r.id, place, err)
	}
	body := data[n:]
	switch {
	case encrypted && r.aead == nil:
		return nil, fmt.Errorf("run %s, %s: an encrypted payload in a run created unencrypted: %w", r.id, place, ErrTampered)
	case !encrypted && r.aead != nil:
		return nil, fmt.Errorf("run %s, %s: an unencrypted payload in a run created encrypted (%s): %w", r.id, place, r.keyRef, ErrTampered)
	case encrypted:
		if len(body) < nonceSize+r.aead.Overhead() {
			return nil, fmt.Errorf("run %s, %s: encrypted payload too short: %w", r.id, place, ErrTampered)
		}
		body, err = r.aead.Open(nil, body[:nonceSize], body[nonceSize:], additional(s, data[:n]))
		if err != nil {
			return nil, fmt.Errorf("run %s, %s (key %s): %w", r.id, place, r.keyRef, ErrTampered)
		}
	}
	for i := len(names) - 1; i >= 0; i-- {
		c := r.chain.codec(names[i])
		if c == nil {
			return nil, fmt.Errorf("run %s, %s: encoded with codec %q, which this process does not have: %w", r.id, place, names[i], ErrCorrupt)
		}
		if body, err = c.Decode(s, body); err != nil {
			return nil, fmt.Errorf("codec %s: run %s, %s: %w: %w", names[i], r.id, place, ErrCorrupt, err)
		}
	}
	return body, nil
}
