package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/tokens"
)

// Envelope is a parsed turn envelope, the JSON object a constrained model
// emits:
//
//	{"action":"call","tool":"<one of the shortlist>","arguments":{...}}
//	{"action":"answer","text":"..."}
//	{"action":"find_tools","query":"..."}
type Envelope struct {
	Action    Action
	Tool      string          // [ActionCall]
	Arguments json.RawMessage // [ActionCall]: a JSON object, as the model wrote it
	Text      string          // [ActionAnswer]
	Query     string          // [ActionFindTools]
}

// ErrBadEnvelope marks text that is not exactly one of the envelope's shapes.
var ErrBadEnvelope = errors.New("llm: not a turn envelope")

// envelopeKeys are the keys each action's object has, besides "action".
var envelopeKeys = map[Action][]string{
	ActionCall:      {"tool", "arguments"},
	ActionAnswer:    {"text"},
	ActionFindTools: {"query"},
}

// ParseEnvelope parses data as exactly one turn envelope, strictly: one
// JSON object in valid UTF-8 (surrounding whitespace allowed), a known
// action, exactly that action's keys (case-sensitive, none missing, none
// extra, none repeated at any depth), strings where strings belong and an
// object for "arguments". Whether the tool is in the shortlist is the
// caller's check ([ParseReply] does it). Errors wrap [ErrBadEnvelope]; their
// text quotes no string of the input (it goes back to the model, and the
// model may have named a tool it must not see again).
func ParseEnvelope(data []byte) (Envelope, error) {
	if !utf8.Valid(data) {
		return Envelope{}, fmt.Errorf("%w: invalid UTF-8", ErrBadEnvelope)
	}
	if err := checkJSON(data); err != nil {
		return Envelope{}, fmt.Errorf("%w: %v", ErrBadEnvelope, err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return Envelope{}, fmt.Errorf("%w: not a JSON object", ErrBadEnvelope)
	}
	var env Envelope
	if err := unmarshalString(obj, "action", (*string)(&env.Action)); err != nil {
		return Envelope{}, err
	}
	want, ok := envelopeKeys[env.Action]
	if !ok {
		return Envelope{}, fmt.Errorf("%w: unknown action (want call, answer or find_tools)", ErrBadEnvelope)
	}
	if len(obj) != len(want)+1 {
		return Envelope{}, fmt.Errorf("%w: action %q takes exactly the keys action, %s; got %d keys",
			ErrBadEnvelope, env.Action, strings.Join(want, ", "), len(obj))
	}
	var err error
	switch env.Action {
	case ActionCall:
		err = unmarshalString(obj, "tool", &env.Tool)
		if err == nil {
			env.Arguments = obj["arguments"]
			if !bytes.HasPrefix(env.Arguments, []byte("{")) {
				err = fmt.Errorf("%w: \"arguments\" must be a JSON object", ErrBadEnvelope)
			}
		}
	case ActionAnswer:
		err = unmarshalString(obj, "text", &env.Text)
	case ActionFindTools:
		err = unmarshalString(obj, "query", &env.Query)
	}
	if err != nil {
		return Envelope{}, err
	}
	return env, nil
}

func unmarshalString(obj map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := obj[key]
	if !ok {
		return fmt.Errorf("%w: missing %q", ErrBadEnvelope, key)
	}
	if err := json.Unmarshal(raw, dst); err != nil || !bytes.HasPrefix(raw, []byte(`"`)) {
		return fmt.Errorf("%w: %q must be a string", ErrBadEnvelope, key)
	}
	return nil
}

// checkJSON reports whether data is one JSON value with no trailing data
// and no object that repeats a key: encoding/json keeps the last of
// repeated keys silently, and a value two readers could read differently
// must not reach a tool.
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

const maxDepth = 128

func walkValue(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return jsonSyntax(err)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return jsonSyntax(err)
			}
			key, _ := keyTok.(string)
			if seen[key] {
				return errors.New("a key is repeated in an object")
			}
			seen[key] = true
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	return jsonSyntax(err)
}

func jsonSyntax(err error) error {
	if err == nil {
		return nil
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("unexpected end of JSON")
	}
	return err
}

// toolPromptHeader is ToolPrompt's text before the tool lines.
func toolPromptHeader(withTools bool) string {
	var b strings.Builder
	// The placeholders stand outside quotes, so none of these lines is
	// itself a valid reply: a model that copies one is repaired, never
	// answered with "<your answer>".
	b.WriteString("Reply with exactly one JSON object and nothing else, one of:\n")
	if withTools {
		b.WriteString(`{"action":"call","tool":<one tool's name as a JSON string>,"arguments":<that tool's parameters as a JSON object>} to call one of the tools below;` + "\n")
	}
	b.WriteString(`{"action":"answer","text":<your answer to the user as a JSON string>} to answer the user;` + "\n")
	b.WriteString(`{"action":"find_tools","query":<what you need as a JSON string>} to look for a tool that is not listed.` + "\n")
	if withTools {
		b.WriteString("Tools:")
	} else {
		b.WriteString("No tools are available for this step.")
	}
	return b.String()
}

// ToolPromptTokens returns the o200k_base token count of
// ToolPrompt(tools), counted line by line (the ends of lines are pre-token
// boundaries of o200k_base, so the sum is the whole's count) with each distinct line
// counted once per process: a tool's line costs nothing the second time
// it is shortlisted. Callers can count a whole catalog the same way for
// [Request.CatalogTokens].
func ToolPromptTokens(tools []ToolSpec) int {
	header := toolPromptHeader(len(tools) > 0)
	if len(tools) == 0 {
		return tokens.Estimate(header)
	}
	// o200k_base joins a newline to the punctuation before it ("}\n"), so
	// the pieces end after each newline.
	n := tokens.Estimate(header + "\n")
	for i, t := range tools {
		line := string(toolLine(t))
		if i < len(tools)-1 {
			line += "\n"
		}
		n += tokens.Estimate(line)
	}
	return n
}

// ToolPrompt returns the system-prompt section that shows the model the
// shortlist and the envelope it must reply with. It names no tool outside
// tools. One line per tool: {"name","description","parameters"} with the
// parameters schema compacted but otherwise as given.
func ToolPrompt(tools []ToolSpec) string {
	var b strings.Builder
	b.WriteString(toolPromptHeader(len(tools) > 0))
	for _, t := range tools {
		b.WriteByte('\n')
		b.Write(toolLine(t))
	}
	return b.String()
}

// ToolLine is one tool as [ToolPrompt] lists it: {"name","description",
// "parameters"} on one line. A caller that shows a tool later in the
// conversation ([Request.PromptTools]) shows it in this form.
func ToolLine(t ToolSpec) string { return string(toolLine(t)) }

func toolLine(t ToolSpec) []byte {
	var params bytes.Buffer
	if err := json.Compact(&params, t.Parameters); err != nil {
		params.Reset()
		params.WriteString("{}")
	}
	line, _ := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, params.Bytes()})
	return line
}

// WithToolPrompt returns req's messages with ToolPrompt(req.Tools) (the
// first req.PromptTools of them, when set) added to the system message: appended to a leading system message, or as a new
// one in front; with req.NoToolPrompt, req's messages unchanged. It does not
// modify req.
func WithToolPrompt(req *Request) []Message {
	if req.NoToolPrompt {
		return slices.Clone(req.Messages)
	}
	listed := req.Tools
	if req.PromptTools > 0 && req.PromptTools < len(listed) {
		listed = listed[:req.PromptTools]
	}
	prompt := ToolPrompt(listed)
	msgs := make([]Message, 0, len(req.Messages)+1)
	if len(req.Messages) > 0 && req.Messages[0].Role == RoleSystem {
		first := req.Messages[0]
		if first.Content != "" {
			first.Content += "\n\n"
		}
		first.Content += prompt
		msgs = append(msgs, first)
		return append(msgs, req.Messages[1:]...)
	}
	msgs = append(msgs, Message{Role: RoleSystem, Content: prompt})
	return append(msgs, req.Messages...)
}
