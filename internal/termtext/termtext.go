// Package termtext makes text safe to write to a terminal. The CLI prints
// what others chose: run IDs, workflow names, attributes, errors, a dynamic
// run's source. Written raw, an escape sequence in one of them would be
// obeyed by the operator's terminal (retitle the window, rewrite what is on
// screen, answer back), a carriage return would overwrite the line before
// it, and a bidirectional override would show text in an order other than
// the bytes'. Every byte the CLI writes goes through Writer, so no field
// can be forgotten.
package termtext

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Writer writes to W what it is given, with every control character
// escaped except newline and tab (the CLI's own layout): C0 controls and
// DEL as \xNN, C1 controls and Unicode's bidirectional formatting
// characters as \uNNNN, and bytes that are not UTF-8 as \xNN. The \u form
// is a JSON escape of the same character, so JSON stays valid JSON with
// the same meaning. A rune cut in two by separate writes is escaped byte by
// byte, never passed on.
type Writer struct{ W io.Writer }

func (t Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.W, escape(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// String is s escaped as Writer escapes it.
func String(s string) string { return escape([]byte(s)) }

func escape(p []byte) string {
	out := make([]byte, 0, len(p))
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, p[0])
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, bidi(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[:size]...)
		}
		p = p[size:]
	}
	return string(out)
}

// bidi reports whether r is a bidirectional formatting character: the
// marks, embeddings, overrides and isolates that reorder text on screen.
func bidi(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
