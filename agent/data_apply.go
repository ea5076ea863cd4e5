package agent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Objects returns the structured objects a client shows after reading
// parts, by stream ID: the parts Settle keeps, their updates applied in
// order. It is the reducer a Go client applies; a final update replaces
// the object.
func Objects(parts []Part) (map[string]any, error) {
	objects := map[string]any{}
	for _, p := range Settle(parts) {
		if p.Type != PartData || p.Data == nil {
			continue
		}
		obj, err := applyData(objects[p.Data.StreamID], *p.Data)
		if err != nil {
			return objects, err
		}
		objects[p.Data.StreamID] = obj
	}
	return objects, nil
}

// applyData returns obj with u applied.
func applyData(obj any, u DataUpdate) (any, error) {
	var v any
	if err := json.Unmarshal(u.Value, &v); err != nil {
		return obj, fmt.Errorf("agent: structured stream %q: the %s value is not JSON: %w", u.StreamID, u.Kind, err)
	}
	if u.Kind == DataFinal {
		return v, nil
	}
	op, err := dataOp(u.Kind, v)
	if err != nil {
		return obj, fmt.Errorf("agent: structured stream %q: %w", u.StreamID, err)
	}
	if u.Path == "" {
		return obj, fmt.Errorf("agent: structured stream %q: a %s update needs a path", u.StreamID, u.Kind)
	}
	out, err := applyAt(obj, strings.Split(u.Path, "."), op)
	if err != nil {
		return obj, fmt.Errorf("agent: structured stream %q: %s at %q: %w", u.StreamID, u.Kind, u.Path, err)
	}
	return out, nil
}

// dataOp is what an update does to the value at its path.
func dataOp(kind DataKind, v any) (func(old any) (any, error), error) {
	switch kind {
	case DataSet:
		return func(any) (any, error) { return v, nil }, nil
	case DataAppend:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("an append's value is an array of items, not %T", v)
		}
		return func(old any) (any, error) {
			arr, ok := old.([]any)
			if old != nil && !ok {
				return nil, fmt.Errorf("it holds a %s, not an array", kindOf(old))
			}
			return append(arr, items...), nil
		}, nil
	case DataTextDelta:
		text, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("a text-delta's value is a string, not %T", v)
		}
		return func(old any) (any, error) {
			s, ok := old.(string)
			if old != nil && !ok {
				return nil, fmt.Errorf("it holds a %s, not a string", kindOf(old))
			}
			return s + text, nil
		}, nil
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}

// applyAt returns node with op applied at path, making the objects on
// the way. A number indexes an array that exists; a path cannot go
// through a string, number or boolean.
func applyAt(node any, path []string, op func(any) (any, error)) (any, error) {
	if len(path) == 0 {
		return op(node)
	}
	seg, rest := path[0], path[1:]
	if seg == "" {
		return nil, fmt.Errorf("empty path segment")
	}
	switch n := node.(type) {
	case nil:
		child, err := applyAt(nil, rest, op)
		return map[string]any{seg: child}, err
	case map[string]any:
		child, err := applyAt(n[seg], rest, op)
		if err != nil {
			return nil, err
		}
		n[seg] = child
		return n, nil
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(n) {
			return nil, fmt.Errorf("%q is not an index of an array of %d", seg, len(n))
		}
		child, err := applyAt(n[i], rest, op)
		if err != nil {
			return nil, err
		}
		n[i] = child
		return n, nil
	}
	return nil, fmt.Errorf("%q is under a %s", seg, kindOf(node))
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
