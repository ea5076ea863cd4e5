// Package zstd is a payload codec (codec.Codec) that compresses with
// Zstandard (github.com/klauspost/compress/zstd), only where it pays: for
// payloads of at least MinSize bytes whose compressed form is smaller.
// It is a package of its own so that programs without compression do
// not link the compressor.
package zstd

import (
	"fmt"
	"runtime"

	"github.com/klauspost/compress/zstd"

	"github.com/lambdaworkflow/workflow/codec"
)

// DefaultMinSize is the smallest payload compressed by default: below it
// a Zstandard frame's own overhead (about a dozen bytes) eats the gain,
// and a stream's token-sized chunks are left alone.
const DefaultMinSize = 256

// maxDecoded bounds a decoded payload, so a forged frame cannot make a
// reader allocate without limit: 64 MiB, past anything a World stores.
const maxDecoded = 64 << 20

// Codec compresses payloads with Zstandard.
type Codec struct {
	minSize int
	enc     *zstd.Encoder
	dec     *zstd.Decoder
}

// New returns the codec; minSize 0 means DefaultMinSize.
func New(minSize int) *Codec {
	if minSize <= 0 {
		minSize = DefaultMinSize
	}
	// Options that cannot fail; the encoder and decoder are safe for
	// concurrent EncodeAll / DecodeAll.
	// Payloads are small: a 1 MiB window and the low-memory modes keep each
	// one-shot call from allocating the default 8 MiB of state.
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(1<<20),
		zstd.WithLowerEncoderMem(true), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(maxDecoded))
	return &Codec{minSize: minSize, enc: enc, dec: dec}
}

// Name is "zstd".
func (c *Codec) Name() string { return "zstd" }

// Encode compresses data if it is at least the minimum size and its
// compressed form (with the header's five bytes for the codec's name) is
// smaller.
func (c *Codec) Encode(_ codec.Scope, data []byte) ([]byte, bool, error) {
	if len(data) < c.minSize {
		return nil, false, nil
	}
	out := c.enc.EncodeAll(data, make([]byte, 0, len(data)/2))
	if len(out)+len(c.Name())+1 >= len(data) {
		return nil, false, nil
	}
	return out, true, nil
}

// Decode decompresses data.
func (c *Codec) Decode(_ codec.Scope, data []byte) ([]byte, error) {
	out, err := c.dec.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}

var _ codec.Codec = (*Codec)(nil)
