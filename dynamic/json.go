package dynamic

import (
	"encoding/json"
	"fmt"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
)

// Values cross between the source and the run (steps, hooks, the input
// and the result) as JSON, through Starlark's own json module, so a
// source sees exactly what json.decode would give it.
var (
	jsonEncode = starjson.Module.Members["encode"]
	jsonDecode = starjson.Module.Members["decode"]
)

func encode(th *starlark.Thread, v starlark.Value) (json.RawMessage, error) {
	s, err := starlark.Call(th, jsonEncode, starlark.Tuple{v}, nil)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(s.(starlark.String)), nil
}

func decode(th *starlark.Thread, raw json.RawMessage) (starlark.Value, error) {
	if len(raw) == 0 {
		return starlark.None, nil
	}
	v, err := starlark.Call(th, jsonDecode, starlark.Tuple{starlark.String(raw)}, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding %.80s: %w", raw, err)
	}
	return v, nil
}
