package termtext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEscapesWhatATerminalObeys(t *testing.T) {
	for in, want := range map[string]string{
		"run-1":             "run-1",
		"a\tb\nc":           "a\tb\nc",
		"\x1b]0;pwned\x07":  `\x1b]0;pwned\x07`,
		"safe\rforged":      `safe\x0dforged`,
		"\x1b[2J\x7f":       `\x1b[2J\x7f`,
		"csi\u009b31m":      `csi\u009b31m`,
		"\u202egnp.exe":     `\u202egnp.exe`,
		"\u2066x\u2069":     `\u2066x\u2069`,
		"bad \x9b byte":     `bad \x9b byte`,
		"café, 東京, emoji 🙂": "café, 東京, emoji 🙂",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSONStaysJSON(t *testing.T) {
	b, _ := json.Marshal(map[string]string{"id": "x\u202e\u0085y\x1b"})
	var sb strings.Builder
	if _, err := (Writer{&sb}).Write(b); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(sb.String()), &back); err != nil || back["id"] != "x\u202e\u0085y\x1b" {
		t.Fatalf("%s read back as %q, %v", sb.String(), back, err)
	}
}
