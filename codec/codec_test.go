package codec_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaworkflow/workflow/codec"
	"github.com/lambdaworkflow/workflow/codec/zstd"
)

var key1 = []byte("0123456789abcdef0123456789abcdef")

func sealedChain(t *testing.T, opts codec.Options) *codec.Chain {
	t.Helper()
	kr, err := codec.NewKeyring("k1", map[string][]byte{"k1": key1})
	if err != nil {
		t.Fatal(err)
	}
	opts.Keys = kr
	opts.Codecs = append(opts.Codecs, zstd.New(0))
	return codec.New(opts)
}

func start(t *testing.T, c *codec.Chain, runID string) (string, *codec.Run) {
	t.Helper()
	attr, r, err := c.Start(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return attr, r
}

var tokenJSON = []byte(strings.Repeat(`{"type":"text-delta","delta":"the "},`, 100))

func TestRoundTripCompressesWhatPays(t *testing.T) {
	c := sealedChain(t, codec.Options{})
	_, r := start(t, c, "run1")
	for _, payload := range [][]byte{tokenJSON, []byte(`"short"`), {}} {
		enc, err := r.Encode("step_completed/1", payload)
		if err != nil {
			t.Fatal(err)
		}
		if len(payload) > 0 && bytes.Contains(enc, payload) {
			t.Fatalf("payload in the clear: %q", enc)
		}
		got, err := r.Decode("step_completed/1", enc)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("round trip of %d bytes: %q, %v", len(payload), got, err)
		}
		compressed := bytes.Contains(enc[:12], []byte("zstd"))
		if want := len(payload) >= zstd.DefaultMinSize; compressed != want {
			t.Errorf("%d bytes: compressed %v, want %v (%d bytes encoded)", len(payload), compressed, want, len(enc))
		}
	}
	enc, _ := r.Encode("p", tokenJSON)
	if len(enc) > len(tokenJSON)/5 {
		t.Errorf("token stream JSON: %d bytes encoded from %d", len(enc), len(tokenJSON))
	}
}

func TestIncompressibleIsNotCompressed(t *testing.T) {
	c := codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}})
	_, r := start(t, c, "run1")
	random := []byte(strings.Repeat("x", 0))
	for i := range 1000 {
		random = append(random, byte(i*7919%251)^byte(i>>3*31))
	}
	enc, err := r.Encode("p", random)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc[:12], []byte("zstd")) && len(enc) >= len(random) {
		t.Fatalf("compressed to %d bytes from %d", len(enc), len(random))
	}
}

func TestFlippedByteFails(t *testing.T) {
	c := sealedChain(t, codec.Options{})
	_, r := start(t, c, "run1")
	for _, payload := range [][]byte{tokenJSON, []byte(`{"card":"4242"}`)} {
		enc, err := r.Encode("hook_received/2", payload)
		if err != nil {
			t.Fatal(err)
		}
		for i := range enc {
			flipped := bytes.Clone(enc)
			flipped[i] ^= 0x01
			got, err := r.Decode("hook_received/2", flipped)
			if err == nil {
				t.Fatalf("byte %d of %d flipped: decoded %q", i, len(enc), got)
			}
			if !errors.Is(err, codec.ErrTampered) && !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("byte %d flipped: %v", i, err)
			}
		}
	}
}

func TestMovedPayloadFails(t *testing.T) {
	c := sealedChain(t, codec.Options{})
	attr1, r1 := start(t, c, "run1")
	enc, _ := r1.Encode("step_completed/1", []byte(`"a"`))
	if _, err := r1.Decode("step_completed/2", enc); !errors.Is(err, codec.ErrTampered) {
		t.Errorf("moved to another place: %v", err)
	}
	_, r2 := start(t, c, "run2")
	if _, err := r2.Decode("step_completed/1", enc); !errors.Is(err, codec.ErrTampered) {
		t.Errorf("moved to another run: %v", err)
	}
	// Another run's wrapped key is bound to that run.
	if _, err := c.Open(context.Background(), "run2", attr1); err == nil {
		t.Error("run2 opened with run1's wrapped key")
	}
}

func TestWrongKey(t *testing.T) {
	attr, r := start(t, sealedChain(t, codec.Options{}), "run1")
	enc, _ := r.Encode("p", []byte(`"x"`))
	other, err := codec.NewKeyring("k1", map[string][]byte{"k1": []byte("ffffffffffffffffffffffffffffffff")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = codec.New(codec.Options{Keys: other}).Open(context.Background(), "run1", attr)
	var nokey *codec.NoKeyError
	if !errors.As(err, &nokey) || nokey.Key != "local k1" {
		t.Fatalf("another key k1: %v", err)
	}
	if _, err := (*codec.Chain)(nil).Open(context.Background(), "run1", attr); !strings.Contains(fmtErr(err), "payload is encrypted; no key for run run1 (local k1)") {
		t.Fatalf("no chain: %v", err)
	}
	// The right key, in a chain that caches it, decodes.
	r2, err := sealedChain(t, codec.Options{}).Open(context.Background(), "run1", attr)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r2.Decode("p", enc); err != nil || string(got) != `"x"` {
		t.Fatalf("decoded %q, %v", got, err)
	}
}

func TestKillSwitch(t *testing.T) {
	c := sealedChain(t, codec.Options{Disabled: true})
	if attr, r, err := c.Start(context.Background(), "run1"); attr != "" || r != nil || err != nil {
		t.Fatalf("a disabled chain started a sealed run: %q %v %v", attr, r, err)
	}
	attr, r := start(t, sealedChain(t, codec.Options{}), "run1")
	enc, _ := r.Encode("p", tokenJSON)
	// Runs created sealed stay sealed, and still decode.
	opened, err := c.Open(context.Background(), "run1", attr)
	if err != nil || !opened.Encrypted() {
		t.Fatalf("disabled chain opening a sealed run: %v", err)
	}
	if got, err := opened.Decode("p", enc); err != nil || !bytes.Equal(got, tokenJSON) {
		t.Fatalf("decode with the kill switch on: %v", err)
	}
	again, _ := opened.Encode("p", tokenJSON)
	if bytes.Contains(again[:12], []byte("zstd")) {
		t.Error("the kill switch left compression on")
	}
	t.Setenv(codec.KillSwitch, "off")
	if attr, _, _ := sealedChain(t, codec.Options{}).Start(context.Background(), "run2"); attr != "" {
		t.Errorf("%s=off: new run sealed: %q", codec.KillSwitch, attr)
	}
}

func TestUnencryptedPayloadInSealedRun(t *testing.T) {
	_, plain := start(t, codec.New(codec.Options{Codecs: []codec.Codec{zstd.New(0)}}), "run1")
	enc, _ := plain.Encode("p", []byte(`"x"`))
	_, sealed := start(t, sealedChain(t, codec.Options{}), "run1")
	if _, err := sealed.Decode("p", enc); !errors.Is(err, codec.ErrTampered) {
		t.Fatalf("an unencrypted payload in an encrypted run: %v", err)
	}
}

func TestKeyringFromEnv(t *testing.T) {
	t.Setenv(codec.KeysEnv, "new:"+b64(key1)+",old:"+b64([]byte("ffffffffffffffffffffffffffffffff")))
	kr, err := codec.KeyringFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	k, err := kr.GenerateKey(context.Background(), "r")
	if err != nil || !strings.HasPrefix(k.Wrapped, "new ") {
		t.Fatalf("wrapped %q, %v", k.Wrapped, err)
	}
	t.Setenv(codec.KeysEnv, "")
	t.Setenv(codec.KeyFileEnv, t.TempDir()+"/missing")
	if _, err := codec.KeyringFromEnv(); err == nil {
		t.Fatal("a missing key file read")
	}
	t.Setenv(codec.KeyFileEnv, "")
	if _, err := codec.KeyringFromEnv(); !errors.Is(err, codec.ErrNoKeys) {
		t.Fatalf("nothing set: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
