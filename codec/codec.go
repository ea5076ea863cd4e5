// Package codec encodes the payloads a World stores for a run: step inputs
// and outputs, hook payloads, the run's input and output, and its stream
// chunks. A Chain compresses them (with the codecs it is given, such as
// codec/zstd) and, given a KeyProvider, encrypts them with AES-256-GCM
// under a data key of the run's own.
//
// Every encoded payload starts with a small header naming what was done to
// it, so a run keeps the scheme it was created with: a process that stops
// compressing still reads compressed payloads, a run created plain stays
// plain, and a run created encrypted stays encrypted whatever the process
// configures later. The run's scheme (and its data key, wrapped by the
// KeyProvider) is recorded with the run, in its reserved $codec attribute.
//
// What is not encoded: run, hook and stream IDs, hook tokens and metadata,
// attributes, timestamps, step names, error records and cancellation
// reasons. They stay readable to anyone who can read the World.
package codec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Codec is one transformation of payload bytes, like Temporal's
// PayloadCodec: a compressor, or a user's own encoding. A Chain applies
// its codecs in order and undoes them in reverse.
type Codec interface {
	// Name identifies the codec in the header of every payload it
	// encoded (at most 255 bytes); it must never change.
	Name() string
	// Encode transforms data, or reports applied false to leave this
	// payload as it is (a compressor whose output would not be smaller).
	Encode(s Scope, data []byte) (out []byte, applied bool, err error)
	// Decode undoes Encode.
	Decode(s Scope, data []byte) ([]byte, error)
}

// Scope is what a payload belongs to. The Chain binds encrypted payloads
// to it (as AES-GCM's additional data), so a payload moved to another run
// or another place in the log fails to decrypt.
type Scope struct {
	RunID string
	// Place names the payload within its run: an event's type and
	// correlation ID ("step_completed/3"), "run.input", "stream/<name>".
	Place string
}

// Options configure a Chain.
type Options struct {
	// Codecs encode new payloads in order (e.g. zstd.New()); all of them
	// also decode, whether or not the Chain is Disabled.
	Codecs []Codec
	// Keys, if set, encrypts the payloads of new runs, each run under a
	// data key of its own; it also unwraps the keys of encrypted runs.
	Keys KeyProvider
	// Disabled is the kill switch (also set by the environment variable
	// WORKFLOW_PAYLOAD_CODECS=off): new runs are created plain and
	// nothing is compressed any more. A run already encrypted stays
	// encrypted, and every payload already encoded still decodes.
	Disabled bool
	// CachedKeys bounds how many unwrapped data keys the Chain keeps in
	// memory (default 4096), so that each payload does not cost the
	// KeyProvider a call (a KMS request on AWS).
	CachedKeys int
}

// KillSwitch is the environment variable that, set to "off" or "0",
// disables every Chain (Options.Disabled).
const KillSwitch = "WORKFLOW_PAYLOAD_CODECS"

// Chain encodes and decodes payloads. A nil *Chain is a process without
// codecs: it creates plain runs, and refuses, with an error saying why,
// to read a run whose payloads are encoded.
type Chain struct {
	codecs   []Codec
	keys     KeyProvider
	disabled bool
	cache    *keyCache
}

// New returns a Chain.
func New(opts Options) *Chain {
	env := strings.ToLower(os.Getenv(KillSwitch))
	return &Chain{
		codecs:   opts.Codecs,
		keys:     opts.Keys,
		disabled: opts.Disabled || env == "off" || env == "0" || env == "false",
		cache:    newKeyCache(opts.CachedKeys),
	}
}

// version is the scheme the $codec attribute of a run names first.
const version = "v1"

// Start decides the scheme of a new run: the value of its $codec
// attribute ("" for a plain run, whose payloads are stored as they are)
// and the Run that encodes its payloads (nil for a plain run).
func (c *Chain) Start(ctx context.Context, runID string) (attr string, r *Run, err error) {
	if c == nil || c.disabled || (len(c.codecs) == 0 && c.keys == nil) {
		return "", nil, nil
	}
	r = &Run{chain: c, id: runID}
	if c.keys == nil {
		return version, r, nil
	}
	k, err := c.keys.GenerateKey(ctx, runID)
	if err != nil {
		return "", nil, fmt.Errorf("codec: new data key for run %s: %w", runID, err)
	}
	if strings.ContainsAny(k.Wrapped, "\t\r\n") || k.Wrapped == "" {
		return "", nil, fmt.Errorf("codec: key provider %s returned an empty wrapped key, or one with line breaks", c.keys.Name())
	}
	if r.aead, err = newAEAD(k.Plaintext); err != nil {
		return "", nil, err
	}
	wrapped := c.keys.Name() + " " + k.Wrapped
	c.cache.put(runID+" "+wrapped, r.aead)
	r.keyRef = c.keys.Name() + " " + keyID(k.Wrapped)
	return version + " " + wrapped, r, nil
}

// Encrypts reports whether the chain encrypts the runs it starts: it has
// keys and is not disabled. (Package dynamic then executes only code
// stored encrypted, which no one without a key can have written.)
func (c *Chain) Encrypts() bool { return c != nil && c.keys != nil && !c.disabled }

// Open returns the Run that encodes and decodes the payloads of a run
// whose $codec attribute is attr: nil for a plain run (attr ""). It
// unwraps the run's data key, once per key while the Chain caches it.
func (c *Chain) Open(ctx context.Context, runID, attr string) (*Run, error) {
	if attr == "" {
		return nil, nil
	}
	ver, wrapped, _ := strings.Cut(attr, " ")
	if ver != version {
		return nil, fmt.Errorf("codec: run %s: payload scheme %q is newer than this process knows (%s)", runID, ver, version)
	}
	if c == nil {
		return nil, &NoKeyError{RunID: runID, Key: keyRefOf(wrapped), NoCodecs: true}
	}
	r := &Run{chain: c, id: runID}
	if wrapped == "" {
		return r, nil
	}
	r.keyRef = keyRefOf(wrapped)
	// Cached by run too: a wrapped key is bound to its run, and one copied
	// to another run must fail to unwrap there.
	if a := c.cache.get(runID + " " + wrapped); a != nil {
		r.aead = a
		return r, nil
	}
	provider, blob, _ := strings.Cut(wrapped, " ")
	if c.keys == nil || c.keys.Name() != provider {
		return nil, &NoKeyError{RunID: runID, Key: r.keyRef}
	}
	plain, err := c.keys.DecryptKey(ctx, runID, blob)
	if err != nil {
		return nil, &NoKeyError{RunID: runID, Key: r.keyRef, Err: err}
	}
	if r.aead, err = newAEAD(plain); err != nil {
		return nil, err
	}
	c.cache.put(runID+" "+wrapped, r.aead)
	return r, nil
}

// keyRefOf names a run's key in errors: its provider and key ID, not the
// wrapped key itself.
func keyRefOf(wrapped string) string {
	provider, blob, _ := strings.Cut(wrapped, " ")
	if id := keyID(blob); id != "" {
		return provider + " " + id
	}
	return provider
}

// keyID is the part of a wrapped key before its last space: the ID of the
// key that wrapped it, if the provider records one.
func keyID(wrapped string) string {
	if i := strings.LastIndexByte(wrapped, ' '); i >= 0 {
		return wrapped[:i]
	}
	return ""
}

func (c *Chain) codec(name string) Codec {
	for _, cd := range c.codecs {
		if cd.Name() == name {
			return cd
		}
	}
	return nil
}

// NoKeyError says a run's payloads cannot be read here: this process has
// no codecs, or no key for the run. Readers (the CLI, the viewer) show it
// in place of the payload.
type NoKeyError struct {
	RunID    string
	Key      string // the run's key: its provider and key ID
	NoCodecs bool   // the process has no Chain at all
	Err      error  // the key provider's error, if it was asked
}

func (e *NoKeyError) Error() string {
	switch {
	case e.NoCodecs && e.Key == "":
		return fmt.Sprintf("payload is encoded (run %s); this process has no payload codecs", e.RunID)
	case e.NoCodecs:
		return fmt.Sprintf("payload is encrypted; no key for run %s (%s): this process has no payload codecs", e.RunID, e.Key)
	case e.Err != nil:
		return fmt.Sprintf("payload is encrypted; no key for run %s (%s): %v", e.RunID, e.Key, e.Err)
	}
	return fmt.Sprintf("payload is encrypted; no key for run %s (%s)", e.RunID, e.Key)
}

func (e *NoKeyError) Unwrap() error { return e.Err }

// Errors a decode returns (wrapped, with the run and place).
var (
	// ErrTampered: an encrypted payload failed authentication. It was
	// changed, moved from another run or place, or sealed under another key.
	ErrTampered = errors.New("codec: payload failed authentication (changed, moved, or sealed with another key)")
	// ErrCorrupt: a payload is not in the encoded format, or names a codec
	// this process does not have.
	ErrCorrupt = errors.New("codec: payload is not readable")
)
