// Package wire holds what the HTTP backend adapters (anthropic, openai's
// Chat Completions and Responses backends, ollama) do alike around their
// different client libraries: the check of a configured base URL, the
// schema a native tool is sent with, the envelope schema of a strict
// structured output, the text of a reply that the envelope parser reads,
// the Retry-After of a failed response, one call, plain or streamed, of
// an SDK-generated client (sdk.go), the frame of an [Embed] call
// (embed.go), the bound on what a response may cost ([LimitReplies],
// limit.go) and on how long a stream may stay silent ([WatchIdle],
// idle.go), and a server's message made fit for an error
// ([ServerMessage], message.go).
//
// Each function's errors are the adapters' contract: they wrap
// [llm.ErrInvalidRequest] and name the field at fault.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
)

// CheckBaseURL returns an error naming pkg's Options.BaseURL unless
// baseURL is "" (the client library's default) or an http(s) URL.
func CheckBaseURL(pkg, baseURL string) error {
	if baseURL == "" || strings.HasPrefix(baseURL, "http://") || strings.HasPrefix(baseURL, "https://") {
		return nil
	}
	return fmt.Errorf("%s: Options.BaseURL %q is not an http(s) URL", pkg, baseURL)
}

// Compact returns schema without insignificant space, its keys in their
// order (strict decoding emits properties in schema order, so the schema
// goes on the wire verbatim rather than through a map). what names the
// schema in the error, e.g. "Tools get_balance".
func Compact(schema json.RawMessage, what string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", llm.ErrInvalidRequest, what, err)
	}
	return b.Bytes(), nil
}

// ToolSchema returns the compacted schema t is sent with in native mode:
// StrictParameters when strict (an error when t has none: a tool is never
// sent without strict: true silently), else Parameters.
func ToolSchema(t llm.ToolSpec, strict bool) (json.RawMessage, error) {
	schema := t.Parameters
	if strict {
		if len(t.StrictParameters) == 0 {
			return nil, fmt.Errorf("%w: Tools %s has no StrictParameters; native mode sends strict: true", llm.ErrInvalidRequest, t.Name)
		}
		schema = t.StrictParameters
	}
	return Compact(schema, "Tools "+t.Name)
}

// EnvelopeSchema returns req's envelope schema as a strict structured
// output takes it (wrapped in a root object where its root is a union,
// see [llm.WrapEnvelopeSchema], and compacted) and the tokens of envelope
// mode's tool definitions: that schema and the system prompt's tool list.
func EnvelopeSchema(req *llm.Request) (json.RawMessage, int, error) {
	wrapped, _ := llm.WrapEnvelopeSchema(req.Constraint.EnvelopeSchema)
	schema, err := Compact(wrapped, "Constraint.EnvelopeSchema")
	if err != nil {
		return nil, 0, err
	}
	return schema, tokens.Estimate(string(schema)) + llm.ToolPromptTokens(req.Tools), nil
}

// EnvelopeRaw returns the text of a reply to an envelope-mode req that
// the envelope parser reads: content, unwrapped from {"envelope":...}
// where the request's schema was sent wrapped.
func EnvelopeRaw(req *llm.Request, content string) string {
	if _, wrapped := llm.WrapEnvelopeSchema(req.Constraint.EnvelopeSchema); wrapped {
		return llm.UnwrapEnvelope(content)
	}
	return content
}

// NoGrammar is the *[llm.ConstraintError] of a grammar-mode request to an
// API (named in the message) that takes no grammar.
func NoGrammar(backend, api string) error {
	return &llm.ConstraintError{Backend: backend, Mode: llm.ModeGrammar,
		Message: "the " + api + " takes no grammar; use envelope or native mode"}
}

// RetryAfter returns the delay res's Retry-After header asks for; 0 when
// res is nil or asks for none.
func RetryAfter(res *http.Response) time.Duration {
	if res == nil {
		return 0
	}
	return llm.ParseRetryAfter(res.Header.Get("Retry-After"), time.Now())
}

// Options is what every adapter's New does first: an error naming pkg
// when model is empty, else a copy of *opts, or the zero O (all
// defaults) when opts is nil.
func Options[O any](pkg, model string, opts *O) (O, error) {
	var o O
	if model == "" {
		return o, errors.New(pkg + ": model is empty")
	}
	if opts != nil {
		o = *opts
	}
	return o, nil
}

// CheckTemperature returns an error naming pkg's Options.Temperature
// when t is set and negative (or NaN).
func CheckTemperature(pkg string, t *float64) error {
	if t != nil && !(*t >= 0) {
		return fmt.Errorf("%s: Options.Temperature %v must not be negative", pkg, *t)
	}
	return nil
}

// deferredTerms are what a 400's message names when the server refuses
// deferred loading: the tool field, the blocks that load tools, the search
// tool and the Responses API's tool groups.
var deferredTerms = []string{"defer_loading", "tool_reference", "tool_search", "tool search", "namespace"}

// DeferredTool returns the tool of deferred (a request's
// [llm.Request.Deferred]) named name.
func DeferredTool(deferred []llm.ToolSpec, name string) (llm.ToolSpec, bool) {
	if i := slices.IndexFunc(deferred, func(d llm.ToolSpec) bool { return d.Name == name }); i >= 0 {
		return deferred[i], true
	}
	return llm.ToolSpec{}, false
}

// RejectsDeferred reports whether msg, the message of an HTTP 400 answering
// req, refuses deferred loading (a model or API version without tool
// search): req carries Request.Deferred and msg names one of its parts.
// The adapters mark such a refusal [llm.ConstraintError.Deferred].
func RejectsDeferred(req *llm.Request, msg string) bool {
	if len(req.Deferred) == 0 {
		return false
	}
	msg = strings.ToLower(msg)
	for _, term := range deferredTerms {
		if strings.Contains(msg, term) {
			return true
		}
	}
	return false
}
