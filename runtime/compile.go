package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// compiled is a step's shortlist as the model sees it and its constraint.
type compiled struct {
	specs       []llm.ToolSpec
	constraint  llm.Constraint
	excluded    []string // tool IDs whose schema did not compile
	relaxations []string
	findTools   bool
}

// compile turns the step's tools into model-facing specs and one output
// constraint for the agent's mode. A tool whose schema cannot be compiled
// is left out of the step (and reported), never shown unconstrained.
func (a *Agent) compile(ts []*tools.Tool, nm names, findTools, requireCall bool) (*compiled, error) {
	c := &compiled{findTools: findTools, constraint: llm.Constraint{Mode: a.opts.Mode}}
	env := make([]grammar.EnvelopeTool, 0, len(ts))
	byName := make(map[string]*tools.Tool, len(ts))
	for _, t := range ts {
		name := nm.name(t)
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		spec := llm.ToolSpec{Name: name, Description: description(t), Parameters: schema}
		if a.opts.Mode == llm.ModeNative {
			strict, relax, err := grammar.OpenAIStrict(schema)
			if err != nil {
				c.excluded = append(c.excluded, t.ID)
				continue
			}
			spec.StrictParameters = strict
			c.relaxations = append(c.relaxations, relaxStrings(t.ID, relax)...)
		}
		envSchema := schema
		if a.opts.StrictSchemas && a.opts.Mode == llm.ModeEnvelope {
			strict, relax, err := grammar.OpenAIStrict(schema)
			if err != nil {
				c.excluded = append(c.excluded, t.ID)
				continue
			}
			envSchema = strict
			c.relaxations = append(c.relaxations, relaxStrings(t.ID, relax)...)
		}
		byName[name] = t
		c.specs = append(c.specs, spec)
		env = append(env, grammar.EnvelopeTool{Name: name, Schema: envSchema})
	}
	if findTools && a.opts.Mode == llm.ModeNative {
		// First, so that the tools appended later never move it (the
		// prompt's prefix stays cacheable).
		c.specs = append([]llm.ToolSpec{{Name: FindToolsName, Description: findtools.Description,
			Parameters: findtools.Schema, StrictParameters: findtools.Schema}}, c.specs...)
	}
	con, excluded, relaxations, err := a.constrain(env, nm, findTools, requireCall, a.opts.Bounds)
	if err != nil {
		return nil, err
	}
	c.constraint = con
	c.excluded = append(c.excluded, excluded...)
	c.relaxations = append(c.relaxations, relaxations...)
	if a.opts.Mode == llm.ModeGrammar {
		sort.Strings(c.relaxations)
	}
	if len(c.excluded) > 0 {
		kept := c.specs[:0]
		for _, s := range c.specs {
			if t, ok := byName[s.Name]; !ok || !slices.Contains(c.excluded, t.ID) {
				kept = append(kept, s)
			}
		}
		c.specs = kept
	}
	return c, nil
}

// constrain compiles the turn envelope of env for the agent's mode with
// the bounds bd where the schemas set none, without the answer branch when
// requireCall: the constraint (its Bounds, those the compiler applied; its
// Tighten, the same compilation with smaller ones), the IDs of the tools
// the compiler left out and its relaxations. ModeNative has no envelope
// and no bounds.
func (a *Agent) constrain(env []grammar.EnvelopeTool, nm names, findTools, requireCall bool, bd llm.Bounds) (llm.Constraint, []string, []string, error) {
	con := llm.Constraint{Mode: a.opts.Mode}
	if !findTools {
		bd.Query = 0 // no find_tools branch
	}
	if requireCall {
		bd.Answer = 0 // no answer branch
	}
	opts := &grammar.Options{NoFindTools: !findTools, NoAnswer: requireCall, Cache: a.grammars,
		MaxAnswerLength: bd.Answer, MaxQueryLength: bd.Query, MaxStringLength: bd.String, MaxItems: bd.Items}
	var excluded, relaxations []string
	switch a.opts.Mode {
	case llm.ModeEnvelope:
		schema, relax, err := grammar.EnvelopeSchema(env, opts)
		if err != nil {
			return con, nil, nil, fmt.Errorf("runtime: envelope schema: %w", err)
		}
		con.EnvelopeSchema = schema
		// The schema form bounds the answer and the query; a call's
		// arguments keep their schemas as they are.
		con.Bounds = llm.Bounds{Answer: bd.Answer, Query: bd.Query}
		for _, r := range relax {
			if r.Keyword == "tool" {
				// EnvelopeSchema leaves out a tool whose schema is not JSON.
				if id, ok := nm.id(strings.TrimPrefix(r.Pointer, "/$defs/")); ok {
					excluded = append(excluded, id)
				}
			}
			relaxations = append(relaxations, r.String())
		}
	case llm.ModeGrammar:
		res, err := grammar.Envelope(env, opts)
		if err != nil {
			return con, nil, nil, fmt.Errorf("runtime: envelope grammar: %w", err)
		}
		con.GBNF, con.Bounds = res.GBNF, bd
		for _, x := range res.Excluded {
			if id, ok := nm.id(x.Name); ok {
				excluded = append(excluded, id)
			}
		}
		for name, rs := range res.Relaxations {
			id, _ := nm.id(name)
			relaxations = append(relaxations, relaxStrings(id, rs)...)
		}
	default:
		return con, nil, nil, nil
	}
	con.Tighten = func(tighter llm.Bounds) (llm.Constraint, error) {
		c, _, _, err := a.constrain(env, nm, findTools, requireCall, tighter)
		return c, err
	}
	return con, excluded, relaxations, nil
}

func relaxStrings(id string, rs []grammar.Relaxation) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = id + " " + r.String()
	}
	return out
}

func description(t *tools.Tool) string {
	if t.Description != "" {
		return t.Description
	}
	return t.Card.Summary
}
