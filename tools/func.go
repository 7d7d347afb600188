package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrInvalidArguments is wrapped (inside [NoEffect]) by the error a [NewFunc]
// handler returns when its arguments do not fit the In type: the function
// never ran, so the call may be retried with corrected arguments.
var ErrInvalidArguments = errors.New("tools: invalid arguments")

// NewFunc makes a [Tool] of a typed Go function. The input schema is derived
// from In with github.com/google/jsonschema-go (`jsonschema.For`), the
// library the official MCP Go SDK uses, so a Go function and an MCP server
// built with that SDK publish the same schema for the same struct: exported
// fields under their `json` names, `jsonschema:"..."` tags as property
// descriptions, fields without omitempty/omitzero required, and no
// additional properties. In must therefore be a struct (or a map with
// string keys); a type jsonschema.For cannot describe is an error.
//
// The Tool's ID is id ("<namespace>/<name>"); card.Name may be left empty
// and is then set from id. The card and the derived schema go through
// Define, like every other tool's, so the same rules hold (errors wrap
// [ErrInvalidTool]).
//
// The handler decodes the arguments object into In strictly: it is checked
// against the derived schema, and unknown fields are rejected. Null or
// empty arguments decode as In's zero value, which the schema still checks.
// A decoding failure returns NoEffect(error wrapping [ErrInvalidArguments])
// without calling fn. fn's error is returned unchanged, so a *[DomainError]
// or a [NoEffect] error keeps its meaning for the gateway; on success Out is
// encoded with encoding/json (a failure to encode it is reported as an
// unknown outcome, since fn has run). The handler is safe for concurrent
// use if fn is.
func NewFunc[In, Out any](id string, card Card, fn func(ctx context.Context, in In) (Out, error)) (Tool, error) {
	if fn == nil {
		return Tool{}, fmt.Errorf("%w %q: nil function", ErrInvalidTool, id)
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return Tool{}, fmt.Errorf("%w %q: cannot derive input schema: %v", ErrInvalidTool, id, err)
	}
	if schema.Type != "object" {
		var in In
		return Tool{}, fmt.Errorf("%w %q: input type %T is not a struct or map (schema type %q)", ErrInvalidTool, id, in, schema.Type)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return Tool{}, fmt.Errorf("%w %q: cannot resolve input schema: %v", ErrInvalidTool, id, err)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return Tool{}, fmt.Errorf("%w %q: cannot encode input schema: %v", ErrInvalidTool, id, err)
	}
	t := Tool{ID: id, Card: card}
	if t.Card.Name == "" {
		t.Card.Name = t.Name()
	}
	if err := t.Validate(); err != nil {
		return Tool{}, err
	}
	t, err = Define(t.Namespace(), Definition{
		Name: t.Card.Name, Summary: card.Summary, InputSchema: raw,
		Scopes: card.Scopes, Aliases: card.Aliases, NotFor: card.NotFor, Tags: card.Tags, Group: card.Group,
		ReadOnly: card.ReadOnly, Irreversible: card.Irreversible, Idempotent: card.Idempotent, OpenWorld: card.OpenWorld,
	})
	if err != nil {
		return Tool{}, err
	}
	t.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		in, err := decodeArgs[In](args, resolved)
		if err != nil {
			return nil, NoEffect(fmt.Errorf("%w for %s: %v", ErrInvalidArguments, id, err))
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		res, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("tools: %s: encode result: %w", id, err)
		}
		return res, nil
	}
	return t, nil
}

// decodeArgs checks args against the schema and decodes them into In,
// rejecting unknown fields and trailing data.
func decodeArgs[In any](args json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var in In
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var generic any
	if err := json.Unmarshal(args, &generic); err != nil {
		return in, err
	}
	if err := schema.Validate(generic); err != nil {
		return in, err
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return in, errors.New("trailing data after the arguments object")
	}
	return in, nil
}
