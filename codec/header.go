package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
)

// The header every encoded payload starts with:
//
//	0xF7 0x57     magic: 0xF7 starts no UTF-8 text and no JSON value
//	0x01          format version
//	flags         bit 0: encrypted (a 12-byte nonce follows the header,
//	              then the AES-256-GCM ciphertext and its 16-byte tag)
//	n             how many codecs were applied, then n times:
//	len name      each codec's name, in the order they were applied
//
// An encrypted payload authenticates its header too, so a codec cannot be
// dropped from it, nor its encryption flag cleared, unnoticed.
const (
	magic0, magic1 = 0xF7, 0x57
	formatVersion  = 1
	flagEncrypted  = 1
	nonceSize      = 12
	fixedHeader    = 5
)

// IsEncoded reports whether data starts with the header of an encoded
// payload. No JSON value does, so a plain run's payloads never pass for
// encoded ones.
func IsEncoded(data []byte) bool {
	return len(data) >= fixedHeader && data[0] == magic0 && data[1] == magic1
}

func header(names []string, encrypted bool) []byte {
	size := fixedHeader
	for _, n := range names {
		size += 1 + len(n)
	}
	h := make([]byte, 0, size)
	var flags byte
	if encrypted {
		flags = flagEncrypted
	}
	h = append(h, magic0, magic1, formatVersion, flags, byte(len(names)))
	for _, n := range names {
		h = append(h, byte(len(n)))
		h = append(h, n...)
	}
	return h
}

// parseHeader returns what the header of data says and its length.
func parseHeader(data []byte) (names []string, encrypted bool, n int, err error) {
	if len(data) < fixedHeader || data[0] != magic0 || data[1] != magic1 {
		return nil, false, 0, fmt.Errorf("no codec header: %w", ErrCorrupt)
	}
	if data[2] != formatVersion {
		return nil, false, 0, fmt.Errorf("codec header version %d is not one this process reads: %w", data[2], ErrCorrupt)
	}
	if data[3]&^flagEncrypted != 0 {
		return nil, false, 0, fmt.Errorf("codec header flags %#x unknown: %w", data[3], ErrCorrupt)
	}
	n = fixedHeader
	for range int(data[4]) {
		if n >= len(data) || n+1+int(data[n]) > len(data) {
			return nil, false, 0, fmt.Errorf("codec header cut short: %w", ErrCorrupt)
		}
		names = append(names, string(data[n+1:n+1+int(data[n])]))
		n += 1 + int(data[n])
	}
	return names, data[3]&flagEncrypted != 0, n, nil
}

// additional is the data AES-GCM authenticates with a payload: where it
// belongs and its header.
func additional(s Scope, h []byte) []byte {
	ad := make([]byte, 0, len("workflow-payload/v1")+len(s.RunID)+len(s.Place)+len(h)+2)
	ad = append(ad, "workflow-payload/v1"...)
	ad = append(ad, s.RunID...)
	ad = append(ad, 0)
	ad = append(ad, s.Place...)
	ad = append(ad, 0)
	return append(ad, h...)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("codec: a data key must be 32 bytes (AES-256), not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
