package agent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"strings"
)

// collector assembles a streamed answer into a Response.
type collector struct {
	text     strings.Builder
	calls    []*callBuilder
	byIndex  map[int]*callBuilder
	response Response
	counted  bool // whether the provider reported usage
}

type callBuilder struct {
	id, name string
	input    strings.Builder
}

func newCollector() *collector { return &collector{byIndex: map[int]*callBuilder{}} }

func (c *collector) add(d Delta) {
	c.text.WriteString(d.Text)
	if tc := d.ToolCall; tc != nil {
		b := c.byIndex[tc.Index]
		if b == nil {
			b = &callBuilder{}
			c.byIndex[tc.Index] = b
			c.calls = append(c.calls, b)
		}
		b.id = cmp.Or(tc.ID, b.id)
		b.name = cmp.Or(tc.Name, b.name)
		b.input.WriteString(tc.InputDelta)
	}
	if d.Usage != nil {
		c.counted = true
		c.response.Usage = c.response.Usage.Add(*d.Usage)
	}
	if d.FinishReason != "" {
		c.response.FinishReason = d.FinishReason
	}
	if len(d.Metadata) > 0 {
		if c.response.ProviderMetadata == nil {
			c.response.ProviderMetadata = map[string]any{}
		}
		maps.Copy(c.response.ProviderMetadata, d.Metadata)
	}
	if d.Warning != "" {
		c.response.Warnings = append(c.response.Warnings, d.Warning)
	}
}

// result returns the assembled response. A tool call without an ID or a
// name, or whose input is not JSON, is the provider's bug: it fails the
// call rather than reach a tool.
func (c *collector) result() (Response, error) {
	r := c.response
	r.Message = Message{Role: RoleAssistant, Text: c.text.String()}
	for _, b := range c.calls {
		input := json.RawMessage(cmp.Or(strings.TrimSpace(b.input.String()), "{}"))
		if b.id == "" || b.name == "" || !json.Valid(input) {
			return Response{}, fmt.Errorf("agent: the model streamed a malformed tool call (id %q, name %q, input %q)", b.id, b.name, input)
		}
		r.Message.ToolCalls = append(r.Message.ToolCalls, ToolCall{ID: b.id, Name: b.name, Input: input})
	}
	if !c.counted {
		// A call that costs nothing in the run's usage is worth a look:
		// some OpenAI-compatible servers report usage only when asked.
		r.Warnings = append(r.Warnings, "the provider reported no token usage")
	}
	if r.FinishReason == "" {
		r.FinishReason = FinishOther
	}
	if len(r.Message.ToolCalls) > 0 {
		r.FinishReason = FinishToolCalls
	}
	return r, nil
}

// Collect reads a model's stream to its end and assembles the response,
// as a model call step does (without streaming it anywhere): for code
// that calls a Model outside an agent, and for tests of a Model.
func Collect(stream iter.Seq2[Delta, error]) (Response, error) {
	c := newCollector()
	for d, err := range stream {
		if err != nil {
			return Response{}, err
		}
		c.add(d)
	}
	return c.result()
}
