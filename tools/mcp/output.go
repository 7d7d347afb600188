package mcp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/tools"
)

// CodeInvalidOutput is the [tools.DomainError] Code of a call whose result
// breaks the tool's own outputSchema (MCP says a server MUST give a
// structured result that conforms to the outputSchema a tool declares, and
// a client SHOULD validate it), or is no valid MCP tool result at all (its
// content no array, a content block of a type MCP does not know). The call
// ran (the server answered it), so the gateway records the refusal like
// any domain error and a retry with the same key gets it again, never a
// second execution; the result itself is not handed on.
const CodeInvalidOutput = "INVALID_OUTPUT"

// metaInvalidResult is the _meta member of the tool error a listFilter
// puts in place of a tools/call result the SDK would not decode: what is
// wrong with it, in MCP's terms.
const metaInvalidResult = "io.toolgate/invalid-result"

// invalidResult returns a *[tools.DomainError] with Code
// [CodeInvalidOutput] when res stands for a result of server's tool that
// was no valid MCP tool result ([metaInvalidResult]); nil otherwise.
func invalidResult(server, tool string, res *sdk.CallToolResult) error {
	problem, ok := res.Meta[metaInvalidResult].(string)
	if !ok || !res.IsError {
		return nil
	}
	return &tools.DomainError{Code: CodeInvalidOutput,
		Message: fmt.Sprintf("mcp: %s/%s ran, but its result is no valid MCP tool result (%s), so it is not passed on",
			server, tool, textcut.Shorten(problem, outputShown))}
}

// outputCheckTime bounds one validation of a result against its tool's
// outputSchema (the backtracking patterns a schema may hold).
const outputCheckTime = time.Second

// outputShown bounds the pointer and the message a refusal of a result
// quotes from the violation: both can carry the server's text.
const outputShown = 200

// outputSchema compiles t's outputSchema with the project's one JSON
// Schema setup (formats as annotations, as draft 2020-12 reads them); nil
// when t declares none.
func outputSchema(t *sdk.Tool) (*jsonschema.Schema, error) {
	if t.OutputSchema == nil {
		return nil, nil
	}
	raw, ok := t.OutputSchema.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("outputSchema: %w", err)
		}
	}
	doc, err := jsonschema.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	s, err := jsonschema.Compile(doc, nil)
	if err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	return s, nil
}

// checkOutput returns a *[tools.DomainError] with Code [CodeInvalidOutput]
// when res, a result that is no tool error, lacks the structuredContent
// that schema (tool's outputSchema, nil for none) requires or breaks it;
// nil when it conforms. The message names the tool and the first
// violation's JSON pointer and message, each cut to outputShown bytes: a
// pattern or enum message quotes the offending value, nothing more of the
// result.
func checkOutput(server, tool string, schema *jsonschema.Schema, res *sdk.CallToolResult) error {
	if schema == nil || res.IsError {
		return nil
	}
	refuse := func(why string) error {
		return &tools.DomainError{Code: CodeInvalidOutput,
			Message: fmt.Sprintf("mcp: %s/%s ran, but its result %s, so it is not passed on", server, tool, why)}
	}
	if res.StructuredContent == nil {
		return refuse("has no structuredContent although the tool declares an outputSchema")
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return refuse("cannot be encoded")
	}
	doc, err := jsonschema.ParseDocument(raw)
	if err != nil {
		return refuse("is no valid JSON")
	}
	vs, err := schema.Validate(doc, time.Now().Add(outputCheckTime))
	switch {
	case errors.Is(err, jsonschema.ErrDeadline):
		return refuse("could not be checked against the tool's outputSchema in time")
	case err != nil:
		return refuse("could not be checked against the tool's outputSchema (the schema loops)")
	case len(vs) == 0:
		return nil
	}
	why := fmt.Sprintf("breaks the tool's outputSchema at %s: %s",
		textcut.Shorten(cmp.Or(vs[0].Pointer, "/"), outputShown), textcut.Shorten(vs[0].Message, outputShown))
	if len(vs) > 1 {
		why += " (and other violations)"
	}
	return refuse(why)
}
