package agent

import (
	"reflect"
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
// with the final object.
func streamedFields[T any]() []streamedField {
	return fieldsOf(reflect.TypeFor[T](), nil)
}

func fieldsOf(t reflect.Type, prefix []string) []streamedField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
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

// update writes with w what the text, as far as it has come, adds.
func (fw *fieldWatcher) update(text string, w interface {
	Set(string, any) error
	Append(string, ...any) error
	TextDelta(string, string) error
}) error {
	root := parsePrefix(text)
	for _, f := range fw.fields {
		n := root.at(f.path)
		if n == nil {
			continue
		}
		key := strings.Join(f.path, ".")
		done := fw.sent[key]
		var err error
		switch {
		case f.kind == DataTextDelta && n.kind == 's' && len(n.str) > done:
			err = w.TextDelta(key, n.str[done:])
			fw.sent[key] = len(n.str)
		case f.kind == DataAppend && n.kind == 'a':
			var items []any
			for _, item := range n.items[done:] {
				if !item.complete {
					break
				}
				items = append(items, rawJSON(item.raw))
			}
			if len(items) > 0 {
				err = w.Append(key, items...)
				fw.sent[key] = done + len(items)
			}
		case f.kind == DataSet && n.complete && done == 0:
			err = w.Set(key, rawJSON(n.raw))
			fw.sent[key] = 1
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rawJSON is JSON text that encodes as itself.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
