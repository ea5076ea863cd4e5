package agent

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// jnode is a JSON value read from a prefix of a model's output: as much
// of it as has arrived, and whether it is complete.
type jnode struct {
	kind     byte // 'o' object, 'a' array, 's' string, 'v' number, boolean or null
	complete bool
	str      string            // a string's decoded text so far
	raw      string            // a complete value's JSON text
	fields   map[string]*jnode // an object's members
	items    []*jnode          // an array's items
}

// parsePrefix reads the JSON value text starts with, however much of it
// there is. It returns nil until the value's first character arrives. It
// reads leniently (a malformed part ends the reading where it is): the
// final text is checked by a real decoder.
func parsePrefix(text string) *jnode {
	p := prefixParser{s: text}
	p.space()
	return p.value()
}

type prefixParser struct {
	s string
	i int
}

func (p *prefixParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// value reads the value at p.i; a complete one gets its raw text.
func (p *prefixParser) value() *jnode {
	if p.i >= len(p.s) {
		return nil
	}
	start := p.i
	var n *jnode
	switch p.s[p.i] {
	case '{':
		n = p.object()
	case '[':
		n = p.array()
	case '"':
		n = p.string()
	default:
		n = p.scalar()
	}
	if n != nil && n.complete {
		n.raw = p.s[start:p.i]
	}
	return n
}

func (p *prefixParser) object() *jnode {
	n := &jnode{kind: 'o', fields: map[string]*jnode{}}
	p.i++ // {
	for {
		p.space()
		if p.i >= len(p.s) {
			return n
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			n.complete = true
			return n
		case ',':
			p.i++
			continue
		}
		key := p.string()
		if key == nil || !key.complete {
			return n
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return n
		}
		p.i++
		p.space()
		v := p.value()
		if v == nil {
			return n
		}
		n.fields[key.str] = v
		if !v.complete {
			return n
		}
	}
}

func (p *prefixParser) array() *jnode {
	n := &jnode{kind: 'a'}
	p.i++ // [
	for {
		p.space()
		if p.i >= len(p.s) {
			return n
		}
		switch p.s[p.i] {
		case ']':
			p.i++
			n.complete = true
			return n
		case ',':
			p.i++
			continue
		}
		v := p.value()
		if v == nil {
			return n
		}
		n.items = append(n.items, v)
		if !v.complete {
			return n
		}
	}
}

// string reads a string, decoding as much as has arrived: up to an
// escape or a UTF-8 sequence cut short, which the next delta completes.
func (p *prefixParser) string() *jnode {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return nil
	}
	start := p.i
	p.i++
	end := -1 // the closing quote's index
	safe := p.i
	for j := p.i; j < len(p.s); j++ {
		if p.s[j] == '"' {
			end = j
			break
		}
		if p.s[j] == '\\' {
			if j+1 >= len(p.s) {
				break
			}
			width := 2
			if p.s[j+1] == 'u' {
				width = 6
				if j+3 < len(p.s) && strings.ContainsRune("dD", rune(p.s[j+2])) && strings.ContainsRune("89abAB", rune(p.s[j+3])) {
					width = 12 // a high surrogate: wait for its pair
				}
			}
			if j+width > len(p.s) {
				break
			}
			j += width - 1
		}
		safe = j + 1
	}
	n := &jnode{kind: 's'}
	body := p.s[start+1 : safe]
	if end >= 0 {
		body, n.complete, p.i = p.s[start+1:end], true, end+1
	} else {
		p.i = len(p.s)
		for len(body) > 0 && !utf8.FullRuneInString(body[lastRuneStart(body):]) {
			body = body[:lastRuneStart(body)]
		}
	}
	_ = json.Unmarshal([]byte(`"`+body+`"`), &n.str)
	return n
}

// lastRuneStart is the index where s's last UTF-8 sequence begins.
func lastRuneStart(s string) int {
	i := len(s) - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// scalar reads a number, true, false or null: complete only once
// something follows it, since more digits may be on their way.
func (p *prefixParser) scalar() *jnode {
	j := p.i
	for j < len(p.s) && strings.IndexByte("+-.0123456789eEtruefalsn", p.s[j]) >= 0 {
		j++
	}
	if j == p.i {
		return nil
	}
	n := &jnode{kind: 'v', complete: j < len(p.s)}
	p.i = j
	return n
}
