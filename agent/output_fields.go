package agent

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// streamedField is a field of a structured output declared as streaming
// (`agent:"stream"`): its dot path and how its updates are written.
type streamedField struct {
	path []string
	kind DataKind
}

// streamedFields returns the streaming fields of T, a struct (or a
// pointer to one), at any depth of nested structs: a string streams as
// text-delta, a slice or an array as append of each item once complete,
// anything else as one set once complete. Fields without the tag arrive
// with the final object. Under a slice, an array or a map that is not
// itself streamed, the path goes on with a "*" segment, which matches
// each of its indexes or keys: `Points []Point` whose Point has a
// streamed Label streams "points.*.label" as "points.0.label", ...
func streamedFields[T any]() []streamedField {
	return fieldsOf(reflect.TypeFor[T](), nil)
}

// fieldsOf returns the streaming fields under t at prefix. (A recursive
// type never gets here: its JSON schema is refused first.)
func fieldsOf(t reflect.Type, prefix []string) []streamedField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		if t.Kind() == reflect.Map && t.Key().Kind() != reflect.String {
			return nil
		}
		return fieldsOf(t.Elem(), append(prefix[:len(prefix):len(prefix)], "*"))
	case reflect.Struct:
	default:
		return nil
	}
	var out []streamedField
	for f := range t.Fields() {
		name, skip := jsonName(f)
		if skip {
			continue
		}
		path := append(prefix[:len(prefix):len(prefix)], name)
		if f.Tag.Get("agent") != "stream" {
			out = append(out, fieldsOf(f.Type, path)...)
			continue
		}
		kind := DataSet
		switch f.Type.Kind() {
		case reflect.String:
			kind = DataTextDelta
		case reflect.Slice, reflect.Array:
			kind = DataAppend
		}
		out = append(out, streamedField{path: path, kind: kind})
	}
	return out
}

// jsonName is the name encoding/json gives a struct field, and whether
// it skips it.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", true
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, false
}

// fieldWatcher turns a growing JSON text into the updates of its
// streaming fields, each written once: the text each string has gained,
// the items each array has completed, each other value once complete.
type fieldWatcher struct {
	fields []streamedField
	sent   map[string]int // by path: bytes of text, items, or 1 once set
}

func newFieldWatcher(fields []streamedField) *fieldWatcher {
	return &fieldWatcher{fields: fields, sent: map[string]int{}}
}

// dataWriter is what a fieldWatcher writes its updates with.
type dataWriter interface {
	Set(string, any) error
	Append(string, ...any) error
	TextDelta(string, string) error
}

// update writes with w what the text, as far as it has come, adds.
func (fw *fieldWatcher) update(text string, w dataWriter) error {
	root := parsePrefix(text)
	for _, f := range fw.fields {
		err := fw.expand(root, f.path, nil, w, func(path []string, n *jnode) error {
			return fw.send(f.kind, strings.Join(path, "."), n, w)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// expand calls visit with each value path matches under n, its "*"
// segments replaced by the indexes and keys the text has so far (keys in
// order, so a retried attempt writes the same parts). An array's items
// are announced to the client, as an empty object appended, before
// anything is written under them, so that their indexes exist.
func (fw *fieldWatcher) expand(n *jnode, path, at []string, w dataWriter, visit func([]string, *jnode) error) error {
	if n == nil {
		return nil
	}
	if len(path) == 0 {
		return visit(at, n)
	}
	seg, rest := path[0], path[1:]
	here := func(next string) []string { return append(at[:len(at):len(at)], next) }
	switch {
	case seg != "*" && n.kind == 'o':
		return fw.expand(n.fields[seg], rest, here(seg), w, visit)
	case seg == "*" && n.kind == 'o':
		for _, key := range slices.Sorted(maps.Keys(n.fields)) {
			if err := fw.expand(n.fields[key], rest, here(key), w, visit); err != nil {
				return err
			}
		}
	case seg == "*" && n.kind == 'a':
		key := "[]" + strings.Join(at, ".")
		for i, item := range n.items {
			if i >= fw.sent[key] {
				if err := w.Append(strings.Join(at, "."), map[string]any{}); err != nil {
					return err
				}
				fw.sent[key] = i + 1
			}
			if err := fw.expand(item, rest, here(strconv.Itoa(i)), w, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// send writes what the value n at key has gained since the last update.
func (fw *fieldWatcher) send(kind DataKind, key string, n *jnode, w dataWriter) error {
	done := fw.sent[key]
	switch {
	case kind == DataTextDelta && n.kind == 's' && len(n.str) > done:
		fw.sent[key] = len(n.str)
		return w.TextDelta(key, n.str[done:])
	case kind == DataAppend && n.kind == 'a':
		var items []any
		for _, item := range n.items[done:] {
			if !item.complete {
				break
			}
			items = append(items, rawJSON(item.raw))
		}
		if len(items) > 0 {
			fw.sent[key] = done + len(items)
			return w.Append(key, items...)
		}
	case kind == DataSet && n.complete && done == 0:
		fw.sent[key] = 1
		return w.Set(key, rawJSON(n.raw))
	}
	return nil
}

// rawJSON is JSON text that encodes as itself.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
