package mcp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/internal/fileline"
)

// Server describes one upstream MCP server.
type Server struct {
	// Name is the namespace of the server's tools: tool IDs are "<Name>/<tool>".
	Name string `json:"-"`
	// Command starts a stdio server: the program and its arguments.
	Command []string `json:"command,omitempty"`
	// Env sets variables of the command's environment. A stdio server is
	// started with only a default environment (see [DefaultPassEnv]),
	// the variables PassEnv names and these, never the rest of the
	// parent's: a secret in toolgate's environment is not the server's.
	// Env wins over both.
	Env map[string]string `json:"env,omitempty"`
	// PassEnv names variables of toolgate's own environment to pass to
	// the command as they are, beyond [DefaultPassEnv]: a token the
	// server reads ("GITHUB_PERSONAL_ACCESS_TOKEN"), a proxy
	// ("HTTPS_PROXY"). A name the environment lacks is logged and
	// passes nothing. Only for a Command.
	PassEnv []string `json:"pass_env,omitempty"`
	// URL is a Streamable HTTP endpoint. Exactly one of Command and URL is set.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request (an Authorization header, say).
	Headers map[string]string `json:"headers,omitempty"`
	// Scopes are required, in addition to a tool's own, for every tool of the server.
	Scopes []string `json:"scopes,omitempty"`
	// Tools overrides the cards of single tools by bare name.
	Tools map[string]ToolOverride `json:"tools,omitempty"`
}

// ToolOverride adjusts a card the server's own metadata cannot express.
type ToolOverride struct {
	// Scopes are added to the tool's required scopes.
	Scopes []string `json:"scopes,omitempty"`
	// Irreversible, when set, replaces what the annotations said; set
	// true, the tool is not read-only either, whatever its readOnlyHint
	// or ReadOnly.
	Irreversible *bool `json:"irreversible,omitempty"`
	// ReadOnly, when set, replaces what the annotations said.
	ReadOnly *bool    `json:"read_only,omitempty"`
	Aliases  []string `json:"aliases,omitempty"`
	NotFor   string   `json:"not_for,omitempty"`
	Group    string   `json:"group,omitempty"`
	Tags     []string `json:"tags,omitempty"`
}

func (o ToolOverride) apply(c *tools.Card) {
	c.Scopes = appendUnique(c.Scopes, o.Scopes...)
	if o.ReadOnly != nil {
		c.ReadOnly = *o.ReadOnly
	}
	if o.Irreversible != nil {
		c.Irreversible = *o.Irreversible
		// A server that adds readOnlyHint to a tool the operator made
		// irreversible must not make it read-only too: read-only tools
		// repeat freely in a turn and are announced so to clients.
		if c.Irreversible {
			c.ReadOnly = false
		}
	}
	c.Aliases = appendUnique(c.Aliases, o.Aliases...)
	if o.NotFor != "" {
		c.NotFor = o.NotFor
	}
	if o.Group != "" {
		c.Group = o.Group
	}
	c.Tags = appendUnique(c.Tags, o.Tags...)
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("mcp: invalid server configuration")

func (s Server) validate() error {
	switch {
	case !serverName.MatchString(s.Name):
		return fmt.Errorf("%w: server name %q must match %s", ErrConfig, s.Name, serverName)
	case len(s.Command) == 0 && s.URL == "":
		return fmt.Errorf("%w: server %q has neither command nor url", ErrConfig, s.Name)
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("%w: server %q has both command and url", ErrConfig, s.Name)
	case len(s.Command) > 0 && s.Command[0] == "":
		return fmt.Errorf("%w: server %q has an empty command", ErrConfig, s.Name)
	case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		// The url is not quoted: a placeholder may have put a secret in it.
		scheme, _, ok := strings.Cut(s.URL, "://")
		if !ok || len(scheme) > 16 {
			return fmt.Errorf("%w: server %q url has no http:// or https:// scheme", ErrConfig, s.Name)
		}
		return fmt.Errorf("%w: server %q url scheme %q is not http(s)", ErrConfig, s.Name, scheme)
	case s.URL != "" && len(s.PassEnv) > 0:
		return fmt.Errorf("%w: server %q has pass_env but no command to pass it to", ErrConfig, s.Name)
	}
	for i, name := range s.PassEnv {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return fmt.Errorf("%w: server %q pass_env[%d] %q is not a variable name", ErrConfig, s.Name, i, name)
		}
	}
	return nil
}

// Config is a file of upstream servers, in toolgate's format:
//
//	{"servers": {"memory": {"command": ["npx", "-y", "@modelcontextprotocol/server-memory"],
//	                        "scopes": ["memory:write"]},
//	             "docs":   {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}}}}
//
// or in the one other MCP clients write ([LoadConfig] reads both).
type Config struct {
	Servers map[string]Server `json:"servers"`
}

// configFile is a configuration file with "servers": toolgate's, or VS
// Code's with its "inputs" (prompts toolgate has none of). A file with
// "mcpServers" (Claude Desktop's, Cursor's, Claude Code's) is read for
// that member alone.
type configFile struct {
	Servers map[string]entry `json:"servers"`
	Inputs  []any            `json:"inputs"`
}

// entry is one server as a file writes it: toolgate's members, where
// "command" is a list, and other clients', where it is a string with its
// "args" beside it (in Zed's older form an object {"path", "args",
// "env"}), a "type" (Cline's "transportType") says the
// transport, Windsurf's "serverUrl" is the url and "disabled" turns the
// server off.
type entry struct {
	Command       json.RawMessage         `json:"command"`
	Args          []string                `json:"args"`
	Type          string                  `json:"type"`
	TransportType string                  `json:"transportType"`
	Disabled      bool                    `json:"disabled"`
	Env           map[string]string       `json:"env"`
	PassEnv       []string                `json:"pass_env"`
	URL           string                  `json:"url"`
	ServerURL     string                  `json:"serverUrl"`
	Headers       map[string]string       `json:"headers"`
	Scopes        []string                `json:"scopes"`
	Tools         map[string]ToolOverride `json:"tools"`
	// Zed's: "enabled": false turns the server off; "source" is
	// "custom" for a server Zed starts from its command, "extension"
	// for one an extension starts (configured by its "settings", which
	// nothing else reads).
	Enabled  *bool           `json:"enabled"`
	Source   string          `json:"source"`
	Settings json.RawMessage `json:"settings"`
	// What other clients decide for themselves, which toolgate decides
	// by its own policy and deadlines: their approval lists and their
	// request timeout are ignored, and so are Roo Code's paths whose
	// change restarts the server.
	AutoApprove json.RawMessage `json:"autoApprove"`
	AlwaysAllow json.RawMessage `json:"alwaysAllow"`
	Timeout     json.RawMessage `json:"timeout"`
	WatchPaths  json.RawMessage `json:"watchPaths"`
	// What would change how the server runs, which toolgate cannot do:
	// refused by name rather than ignored (an empty "disabledTools" asks
	// nothing).
	Cwd           json.RawMessage `json:"cwd"`
	EnvFile       json.RawMessage `json:"envFile"`
	DisabledTools []string        `json:"disabledTools"`
}

// transports maps each "type" (or "transportType") other clients write to
// the transport it names: "stdio" or "http", toolgate's Streamable HTTP.
var transports = map[string]string{"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}

// transport returns the transport e's "type" and "transportType" name
// ("" when neither is given) and the member that names it; on a problem
// it returns the member at fault and the reason instead.
func (e entry) transport() (kind, member, reason string) {
	for _, m := range []struct{ member, value string }{{"type", e.Type}, {"transportType", e.TransportType}} {
		k, ok := transports[m.value]
		switch {
		case m.value == "":
			continue
		case m.value == "sse":
			return "", m.member, `"sse" is the older HTTP+SSE transport; toolgate speaks Streamable HTTP only (give the server's Streamable HTTP endpoint, "type": "http")`
		case !ok:
			return "", m.member, fmt.Sprintf("%q is none of stdio, http, streamable-http and streamableHttp", m.value)
		case kind != "" && k != kind:
			return "", m.member, fmt.Sprintf("%q disagrees with \"type\": %q", m.value, e.Type)
		case kind == "":
			kind, member = k, m.member
		}
	}
	return kind, member, ""
}

// maxConfigBytes bounds a configuration file: a few hundred servers fit
// in a fraction of it.
const maxConfigBytes = 1 << 20

// ConfigError is a configuration file that cannot be read as one: the
// File, the 1-based Line of the problem (0 when it concerns the whole
// file) and the [Reason] (fields File string, Line int, Reason string). It
// wraps [ErrConfig].
type ConfigError fileline.Error

// Error reads "FILE:LINE: reason" ("FILE: reason" when Line is 0).
func (e *ConfigError) Error() string { return (*fileline.Error)(e).Error() }

// Unwrap returns [ErrConfig].
func (e *ConfigError) Unwrap() error { return ErrConfig }

// LoadConfig reads and validates a [Config] file of at most 1 MiB. The file
// must have one meaning: a member name repeated in any object ({"servers":
// {"a":…,"a":…}}), an unknown member, a value of the wrong type or data
// after the object is a *[ConfigError] naming the line; a server that does
// not validate is an error naming it. Every error wraps [ErrConfig].
// Comments ("//" to the end of the line, "/* … */") and trailing commas,
// which Zed's settings and VS Code's files may hold, are read as spaces
// in any format.
//
// The file may also be another MCP client's list of servers: Claude
// Desktop's, Cursor's, Claude Code's, Cline's, Roo Code's or Windsurf's
// {"mcpServers": {NAME: {"command": "npx", "args": [...], "env": {...}}}}
// or VS Code's {"servers": {NAME: {"type": "stdio", "command": "npx",
// "args": [...]}}, "inputs": [...]}, or Zed's settings with
// {"context_servers": {NAME: {"command": "npx", "args": [...], "env":
// {...}}}}. A file with "mcpServers" or "context_servers" is read for
// that member alone: the rest is the client's own settings. There
// "command" is a string and "args" its arguments (in toolgate's format
// "command" is the whole list, and "args" beside it is refused). "type",
// or Cline's "transportType", is "stdio", "http", "streamable-http" or
// "streamableHttp", and "sse" is refused, as toolgate speaks Streamable
// HTTP only; Windsurf's "serverUrl" is the url. Two members that say one
// thing ("type" and "transportType", "url" and "serverUrl") must agree. A
// "disabled": true server is left out; "autoApprove", "alwaysAllow",
// "timeout" and "watchPaths" are ignored (toolgate's policy and deadlines
// decide); "cwd", "envFile" and a non-empty "disabledTools" are refused,
// as toolgate cannot honour them. Of Zed's members, "command" may also be
// the older {"path": "npx", "args": [...], "env": {...}}, an "enabled":
// false server is left out, "source" is "custom" ("extension", a server
// an extension starts, is refused) and "settings" beside a command is
// ignored. Such an entry may hold toolgate's "scopes", "tools" and
// "pass_env" too.
//
// In any format, "${env:VAR}", "${VAR}" and "${VAR:-default}" in a
// command, an argument, a url or an env or header value are VAR of
// toolgate's environment (a VAR it lacks, without a default, is an
// error); "${input:ID}", a prompt of VS Code's, and any other "${…}" are
// refused by name. Only what an entry names this way reaches the server
// ([Server.Env]).
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if len(data) > maxConfigBytes {
		return nil, &ConfigError{File: path, Reason: fmt.Sprintf("larger than %d KiB", maxConfigBytes>>10)}
	}
	return parseConfig(data, path)
}

// parseConfig is [LoadConfig] on the file's contents.
func parseConfig(data []byte, file string) (*Config, error) {
	lineAt := func(off int64) int {
		off = max(0, min(off, int64(len(data))))
		return bytes.Count(data[:off], []byte("\n")) + 1
	}
	data, unclosed := blankComments(data)
	if unclosed >= 0 {
		return nil, &ConfigError{File: file, Line: lineAt(int64(unclosed)), Reason: `a "/*" comment is never closed`}
	}
	if err := jcs.Check(data); err != nil {
		var se *jcs.SyntaxError
		if errors.As(err, &se) {
			return nil, &ConfigError{File: file, Line: lineAt(int64(se.Offset)), Reason: se.Msg}
		}
		return nil, &ConfigError{File: file, Reason: err.Error()}
	}
	var entries map[string]entry
	var lists []string
	var start int64
	for _, name := range serverLists {
		if off, ok := topMember(data, name); ok {
			lists, start = append(lists, name), off
		}
	}
	if len(lists) > 1 {
		return nil, &ConfigError{File: file, Reason: fmt.Sprintf("both %q and %q: give one list of servers", lists[0], lists[1])}
	}
	if len(lists) == 1 && lists[0] != "servers" {
		// Another client's file: its other members are its own
		// settings (Claude Desktop's "preferences", Zed's "theme"),
		// not servers.
		if err := decodeStrict(data, start, &entries, strconv.Quote(lists[0]), file, lineAt); err != nil {
			return nil, err
		}
	} else {
		var cf configFile
		if err := decodeStrict(data, 0, &cf, "the configuration", file, lineAt); err != nil {
			return nil, err
		}
		entries = cf.Servers
	}
	lines := memberLines(data, lineAt)
	c := Config{Servers: make(map[string]Server, len(entries))}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e := entries[name]
		if e.Disabled || (e.Enabled != nil && !*e.Enabled) {
			continue
		}
		if !serverName.MatchString(name) {
			// Clients take any name ("Brave Search", Cline's
			// "github.com/org/repo"); here it is a namespace.
			reason := fmt.Sprintf("server name %q must match %s, as it is the namespace of the server's tools (\"NAME/tool\")", name, serverName)
			if alt := pathName(name); serverName.MatchString(alt) {
				reason += fmt.Sprintf(": rename it, say %q", alt)
			}
			return nil, &ConfigError{File: file, Line: lines[name+"\x00"], Reason: reason}
		}
		s, member, reason := e.server(name, os.LookupEnv)
		if reason != "" {
			return nil, &ConfigError{File: file, Line: lines[name+"\x00"+member], Reason: fmt.Sprintf("server %q %q: %s", name, member, reason)}
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		c.Servers[name] = s
	}
	return &c, nil
}

// blankComments returns a copy of data with each comment ("//" to the
// end of the line, "/* … */") and each trailing comma (after a value,
// before "}" or "]") outside strings made spaces, line breaks kept, so
// that offsets and lines stay the file's: Zed's settings and VS Code's
// files are JSON with comments. unclosed is the offset of a "/*" that is
// never closed, or -1.
func blankComments(data []byte) (out []byte, unclosed int) {
	out = bytes.Clone(data)
	inString := false
	comma := -1   // the offset of a comma that would trail, or -1
	var prev byte // the last byte of JSON outside strings, comments and space
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString, comma, prev = true, -1, c
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return out, i
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == ',':
			comma = -1
			if prev != 0 && prev != '[' && prev != '{' && prev != ',' && prev != ':' {
				comma = i
			}
			prev = c
		case c == '}' || c == ']':
			if comma >= 0 {
				out[comma] = ' '
			}
			comma, prev = -1, c
		default:
			comma, prev = -1, c
		}
	}
	return out, -1
}

// serverLists are the top-level members a file lists its servers in:
// toolgate's and VS Code's "servers", and the members other clients keep
// beside their own settings, Claude Desktop's (and most others')
// "mcpServers" and Zed's "context_servers".
var serverLists = []string{"servers", "mcpServers", "context_servers"}

// decodeStrict decodes the JSON value at data[start:] into v, refusing
// unknown members, and returns a *[ConfigError] naming the line of a
// problem; what names the value when it is not an object.
func decodeStrict(data []byte, start int64, v any, what, file string, lineAt func(int64) int) error {
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		reason := fmt.Sprintf("%s is a JSON %s, want an object", what, te.Value)
		if te.Field != "" {
			reason = typeReason(te)
		}
		return &ConfigError{File: file, Line: lineAt(start + te.Offset), Reason: reason}
	}
	return &ConfigError{File: file, Line: lineAt(start + dec.InputOffset()), Reason: strings.TrimPrefix(err.Error(), "json: ")}
}

// typeReason says which member of a decoded object has a value of the
// wrong type, and what type it wants.
func typeReason(te *json.UnmarshalTypeError) string {
	leaf := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
	return fmt.Sprintf("%q is a JSON %s, want %s", leaf, te.Value, te.Type)
}

// topMember returns the offset in data of the value of the member name
// of data's top-level object. data is valid JSON.
func topMember(data []byte, name string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if tok == name {
			off := dec.InputOffset()
			for off < int64(len(data)) && strings.IndexByte(" \t\r\n:", data[off]) >= 0 {
				off++
			}
			return off, true
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return 0, false
		}
	}
	return 0, false
}

// server maps e onto a [Server] named name, resolving its placeholders
// with lookup; on a problem it returns the member at fault and the
// reason instead.
func (e entry) server(name string, lookup func(string) (string, bool)) (s Server, member, reason string) {
	s = Server{Name: name, Env: e.Env, PassEnv: e.PassEnv, URL: e.URL, Headers: e.Headers, Scopes: e.Scopes, Tools: e.Tools}
	urlMember, envMember := "url", "env"
	switch {
	case e.Cwd != nil:
		return s, "cwd", "toolgate starts a server in its own working directory; give absolute paths in the command instead"
	case e.EnvFile != nil:
		return s, "envFile", `toolgate reads no env file; name each variable in "env" ("${env:VAR}" takes it from toolgate's environment)`
	case len(e.DisabledTools) > 0:
		return s, "disabledTools", `toolgate offers every tool a server lists and cannot leave single ones out; to keep a tool from every caller, require a scope no principal holds ("tools": {"NAME": {"scopes": ["…"]}})`
	case e.ServerURL != "" && e.URL != "" && e.ServerURL != e.URL:
		return s, "serverUrl", fmt.Sprintf("%q disagrees with \"url\": %q", e.ServerURL, e.URL)
	case e.Source == "extension":
		return s, "source", `a Zed extension's server, which Zed installs and starts itself; toolgate needs the server's own "command" and "args" (a "custom" server)`
	case e.Source != "" && e.Source != "custom":
		return s, "source", fmt.Sprintf("%q is none of custom and extension", e.Source)
	case e.Settings != nil && e.Command == nil && e.URL == "" && e.ServerURL == "":
		return s, "settings", `settings of a Zed extension's server, which Zed starts itself; toolgate needs the server's own "command" and "args"`
	}
	if e.URL == "" && e.ServerURL != "" {
		s.URL, urlMember = e.ServerURL, "serverUrl"
	}
	switch trimmed := bytes.TrimSpace(e.Command); {
	case len(trimmed) == 0 || string(trimmed) == "null":
		if e.Args != nil {
			return s, "args", `arguments without a "command"`
		}
	case trimmed[0] == '[':
		if err := json.Unmarshal(trimmed, &s.Command); err != nil {
			return s, "command", "a list that is not all strings"
		}
		if e.Args != nil {
			return s, "args", `arguments beside a "command" list: put them in the list, or make "command" the program alone`
		}
	case trimmed[0] == '{':
		// Zed's older form.
		var zed struct {
			Path string            `json:"path"`
			Args []string          `json:"args"`
			Env  map[string]string `json:"env"`
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		var te *json.UnmarshalTypeError
		switch err := dec.Decode(&zed); {
		case errors.As(err, &te) && te.Field != "":
			return s, "command", typeReason(te)
		case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
			return s, "command", strings.TrimPrefix(err.Error(), "json: ") + ` (want "path", "args" and "env")`
		case err != nil:
			return s, "command", strings.TrimPrefix(err.Error(), "json: ")
		case zed.Path == "":
			return s, "command", `an object without "path"`
		case e.Args != nil:
			return s, "args", `arguments beside a "command" object: put them in its "args"`
		case zed.Env != nil && e.Env != nil:
			return s, "env", `beside the "command" object's own "env": give one`
		}
		s.Command = append([]string{zed.Path}, zed.Args...)
		if zed.Env != nil {
			s.Env, envMember = zed.Env, "command"
		}
	case trimmed[0] == '"':
		var program string
		if err := json.Unmarshal(trimmed, &program); err != nil {
			return s, "command", err.Error()
		}
		s.Command = append([]string{program}, e.Args...)
	default:
		return s, "command", "want a program (with \"args\") or a list of the program and its arguments"
	}
	kind, typeMember, reason := e.transport()
	switch {
	case reason != "":
		return s, typeMember, reason
	case kind == "stdio" && s.URL != "":
		return s, urlMember, `a url for a "stdio" server`
	case kind == "http" && len(s.Command) > 0:
		return s, "command", fmt.Sprintf("a command for an HTTP server (%q: %q)", typeMember, cmp.Or(e.Type, e.TransportType))
	}
	var err error
	for i := range s.Command {
		if s.Command[i], err = expand(s.Command[i], lookup); err != nil {
			member := "command"
			if i > 0 && e.Args != nil {
				member = "args"
			}
			return s, member, err.Error()
		}
	}
	if s.URL, err = expand(s.URL, lookup); err != nil {
		return s, urlMember, err.Error()
	}
	if s.Env, err = expandValues(s.Env, lookup); err != nil {
		return s, envMember, err.Error()
	}
	if s.Headers, err = expandValues(s.Headers, lookup); err != nil {
		return s, "headers", err.Error()
	}
	return s, "", ""
}

// placeholder is "${…}" in a value, as other MCP clients write them.
var placeholder = regexp.MustCompile(`\$\{([^}]*)\}`)

// envVar is a variable name as a placeholder may give it.
var envVar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces every "${env:VAR}", "${VAR}" and "${VAR:-default}" in v
// with VAR of the environment lookup reads (default when VAR is unset or
// empty); an unset VAR without a default, a "${input:ID}" (a prompt,
// which toolgate has none of) or any other placeholder is an error
// naming it.
func expand(v string, lookup func(string) (string, bool)) (string, error) {
	var bad error
	out := placeholder.ReplaceAllStringFunc(v, func(m string) string {
		inner := m[2 : len(m)-1]
		name, def, hasDef := strings.Cut(strings.TrimPrefix(inner, "env:"), ":-")
		switch {
		case bad != nil:
		case strings.HasPrefix(inner, "input:"):
			bad = fmt.Errorf("%s asks the user for a value, and toolgate has no prompt: write the value, or \"${env:VAR}\" to take it from toolgate's environment", m)
		case !envVar.MatchString(name):
			bad = fmt.Errorf("%s is not a placeholder toolgate knows (it resolves \"${env:VAR}\", \"${VAR}\" and \"${VAR:-default}\" from its environment)", m)
		default:
			if val, ok := lookup(name); ok && val != "" {
				return val
			} else if hasDef {
				return def
			} else if !ok {
				bad = fmt.Errorf("%s names %s, which toolgate's environment lacks", m, name)
			}
		}
		return ""
	})
	return out, bad
}

// expandValues is [expand] on each value of m, in a new map.
func expandValues(m map[string]string, lookup func(string) (string, bool)) (map[string]string, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		x, err := expand(v, lookup)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		out[k] = x
	}
	return out, nil
}

// memberLines returns the line of each member of each server in data's
// [serverLists], keyed "NAME\x00MEMBER" (and of each server's name,
// keyed "NAME\x00"), for the errors found once the file is decoded. data
// is valid JSON.
func memberLines(data []byte, lineAt func(int64) int) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	// skip reads the value that follows, whole.
	skip := func() bool {
		var v json.RawMessage
		return dec.Decode(&v) == nil
	}
	// keys calls f with each member name of the object that follows,
	// leaving f to read its value.
	keys := func(f func(key string) bool) bool {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return false
		}
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			if err != nil || !ok || !f(key) {
				return false
			}
		}
		_, err := dec.Token()
		return err == nil
	}
	keys(func(top string) bool {
		if !slices.Contains(serverLists, top) {
			return skip()
		}
		return keys(func(name string) bool {
			lines[name+"\x00"] = lineAt(dec.InputOffset())
			return keys(func(member string) bool {
				lines[name+"\x00"+member] = lineAt(dec.InputOffset())
				return skip()
			})
		})
	})
	return lines
}

// List returns the configured servers sorted by name.
func (c *Config) List() []Server {
	out := make([]Server, 0, len(c.Servers))
	for _, s := range c.Servers {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ParsePassEnv reads the values of a repeatable "--mcp-pass-env" flag, each
// a comma-separated list of variable names, into the names a stdio
// server's [Server.PassEnv] takes, in order. An empty name, or one with
// "=" or NUL, is an [ErrConfig] that shows the name and never what
// follows its "=" (a value there may be a secret).
func ParsePassEnv(values []string) ([]string, error) {
	var names []string
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			n = strings.TrimSpace(n)
			if n != "" && !strings.ContainsAny(n, "=\x00") {
				names = append(names, n)
				continue
			}
			if name, _, ok := strings.Cut(n, "="); ok {
				n = name + "=…"
			}
			return nil, fmt.Errorf("%w: pass-env %q is not a variable name (a value belongs in the server's env)", ErrConfig, n)
		}
	}
	return names, nil
}

// ParseCommandSpec turns a CLI "--mcp" value into a stdio [Server]:
// "NAME=CMD ARGS" names the namespace; a bare "CMD ARGS" is named after the
// package, script or program it runs ("npx -y @modelcontextprotocol/server-memory"
// → "server-memory", "node /srv/git/dist/index.js" → "git", "uvx
// mcp-server-git --repository ." → "mcp-server-git").
// Arguments are split on spaces; quote nothing.
func ParseCommandSpec(spec string) (Server, error) {
	name, cmdline, hasName := strings.Cut(spec, "=")
	if !hasName || strings.ContainsAny(name, " \t") {
		name, cmdline = "", spec
	}
	args := strings.Fields(cmdline)
	if len(args) == 0 {
		return Server{}, fmt.Errorf("%w: empty command in %q", ErrConfig, spec)
	}
	if name == "" {
		name = deriveName(args)
	}
	s := Server{Name: name, Command: args}
	return s, s.validate()
}

// checkServerNames returns an error wrapping [ErrConfig] that names the
// first name two of servers share, or nil. Each server's listing replaces
// the tools of its namespace, so of two servers under one name (two
// commands whose derived names agree, "index" for two index.js, or one
// name given twice) the second would silently take the place of the
// first's tools; callers that gather servers from several flags check
// them all together.
func checkServerNames(servers []Server) error {
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		if seen[s.Name] {
			return fmt.Errorf("%w: two upstream servers are named %q: one would replace the other's tools; name each (--mcp \"NAME=CMD ARGS\", --mcp-url NAME=URL)", ErrConfig, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// ParseURLSpec turns a CLI "--mcp-url" value ("NAME=URL" or "URL") into a
// Streamable HTTP [Server]; a bare URL is named after its host.
func ParseURLSpec(spec string) (Server, error) {
	name, url := "", spec
	if n, u, ok := strings.Cut(spec, "="); ok && !strings.Contains(n, "/") && !strings.Contains(n, ":") {
		name, url = n, u
	}
	if name == "" {
		host := url
		if _, rest, ok := strings.Cut(host, "://"); ok {
			host = rest
		}
		host, _, _ = strings.Cut(host, "/")
		name = sanitize(host)
	}
	s := Server{Name: name, URL: url}
	return s, s.validate()
}

// Flags are a command line's MCP flags, as the toolgate CLI names them.
type Flags struct {
	// Commands are the "--mcp" values ([ParseCommandSpec]).
	Commands []string
	// PassEnv are the "--mcp-pass-env" values ([ParsePassEnv]): the
	// variables every Commands server gets beside the default
	// environment ([Server.PassEnv]).
	PassEnv []string
	// URLs are the "--mcp-url" values ([ParseURLSpec]).
	URLs []string
	// Config is the "--mcp-config" file ([LoadConfig]; "" for none).
	Config string
}

// Servers returns the servers of the flags, in this order: each "--mcp"
// value ([ParseCommandSpec]) with the PassEnv names, each "--mcp-url"
// value ([ParseURLSpec]), and the servers of the "--mcp-config" file
// ([LoadConfig]), each name once ([checkServerNames]). An error of a value
// names its flag; every error wraps [ErrConfig]. PassEnv without a "--mcp"
// server is one: a "--mcp-config" server names its own "pass_env".
func (fl Flags) Servers() ([]Server, error) {
	names, err := ParsePassEnv(fl.PassEnv)
	if err != nil {
		return nil, fmt.Errorf("--mcp-pass-env: %w", err)
	}
	if len(names) > 0 && len(fl.Commands) == 0 {
		return nil, fmt.Errorf("--mcp-pass-env: %w: no --mcp server to pass it to (a --mcp-config server names its own pass_env)", ErrConfig)
	}
	var out []Server
	for _, spec := range fl.Commands {
		s, err := ParseCommandSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("--mcp: %w", err)
		}
		s.PassEnv = names
		out = append(out, s)
	}
	for _, spec := range fl.URLs {
		s, err := ParseURLSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("--mcp-url: %w", err)
		}
		out = append(out, s)
	}
	if fl.Config != "" {
		c, err := LoadConfig(fl.Config)
		if err != nil {
			return nil, err
		}
		out = append(out, c.List()...)
	}
	if err := checkServerNames(out); err != nil {
		return nil, err
	}
	return out, nil
}

// deriveName names a bare "--mcp" command after what it runs, the first
// of these that names something:
//
//  1. a package or image reference ("@scope/name@1.2", "ghcr.io/org/name:tag"),
//     named after its last part, or its scope when the last part is generic
//     ("@playwright/mcp" → "playwright");
//  2. a script (".js", ".mjs", ".cjs", ".ts", ".py") or a path after a
//     runner, named after its file, or the nearest folder above it whose
//     name is not generic (".../server-everything/dist/index.js" →
//     "server-everything");
//  3. the first word after a runner ("uvx mcp-server-git …", "npx -y pkg");
//  4. the command itself, when it is neither a runner nor an interpreter
//     ("github-mcp-server stdio" → "github-mcp-server");
//  5. the last word that is not a flag, as before any of these.
//
// Flags, their values after a runner's package, and environment
// assignments ("env KEY=VALUE node …") name nothing, so a flag's value
// ("--transport stdio") no longer names a server that rule 1 to 4 name.
func deriveName(args []string) string {
	words := make([]string, 0, len(args))
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && !isAssignment(a) {
			words = append(words, a)
		}
	}
	for _, w := range words {
		if n := packageName(w); n != "" {
			return n
		}
	}
	for _, w := range words {
		if hasScriptExt(w) {
			if n := pathName(w); n != "" {
				return n
			}
		}
	}
	for i, w := range words {
		if !isRunner(baseOf(w)) || i+1 >= len(words) {
			continue
		}
		next := words[i+1]
		if runnerVerbs[next] && i+2 < len(words) {
			next = words[i+2]
		}
		if n := pathName(next); n != "" {
			return n
		}
	}
	if len(words) > 0 && len(args) > 0 && words[0] == args[0] && !isRunner(baseOf(args[0])) {
		if n := pathName(args[0]); n != "" {
			return n
		}
	}
	for i := len(words) - 1; i >= 0; i-- {
		if n := pathName(words[i]); n != "" {
			return n
		}
	}
	return "mcp"
}

// isAssignment reports whether w is an environment assignment
// ("KEY=VALUE", as env and shells take them).
func isAssignment(w string) bool {
	key, _, ok := strings.Cut(w, "=")
	if !ok || key == "" {
		return false
	}
	for i, r := range key {
		if r != '_' && !(r >= 'A' && r <= 'Z') && !(r >= 'a' && r <= 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// runners start a program named by a later word: interpreters, package
// runners and container engines. Their subcommands (runnerVerbs) are
// skipped when looking for that word.
var runners = map[string]bool{
	"node": true, "nodejs": true, "deno": true, "bun": true, "bunx": true, "npx": true, "pnpx": true,
	"npm": true, "pnpm": true, "yarn": true, "uv": true, "uvx": true, "pipx": true, "python": true,
	"python3": true, "py": true, "ruby": true, "java": true, "go": true, "docker": true, "podman": true,
	"env": true, "sh": true, "bash": true, "cmd": true, "dotnet": true,
}

var runnerVerbs = map[string]bool{"run": true, "exec": true, "dlx": true, "x": true, "tool": true, "start": true}

func isRunner(base string) bool {
	if runners[base] {
		return true
	}
	// python3.12, node22 and the like.
	trimmed := strings.TrimRight(base, "0123456789.")
	return trimmed != base && runners[trimmed]
}

// genericNames say nothing of which server a word belongs to.
var genericNames = map[string]bool{
	"index": true, "main": true, "server": true, "cli": true, "app": true, "dist": true, "build": true,
	"lib": true, "src": true, "bin": true, "out": true, "mcp": true, "stdio": true, "start": true,
	"cmd": true, "node_modules": true, "run": true, "latest": true,
}

// packageName returns the name of an npm package ("@scope/name@1.2") or a
// container image ("ghcr.io/org/name:tag", "mcp/fetch") in w, or "" when w
// is neither (paths start with '/', '.' or '~'; URLs hold "://").
func packageName(w string) string {
	if strings.Contains(w, "://") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, ".") ||
		strings.HasPrefix(w, "~") || hasScriptExt(w) {
		return ""
	}
	scoped := strings.HasPrefix(w, "@")
	if scoped {
		w = w[1:]
	}
	if !strings.Contains(w, "/") {
		return ""
	}
	parts := strings.Split(w, "/")
	last := parts[len(parts)-1]
	if scoped {
		last, _, _ = strings.Cut(last, "@")
	} else {
		last, _, _ = strings.Cut(last, ":")
		last, _, _ = strings.Cut(last, "@")
	}
	if n := sanitize(last); n != "" && !genericNames[strings.ToLower(n)] {
		return n
	}
	for i := len(parts) - 2; i >= 0; i-- {
		if n := sanitize(parts[i]); n != "" && !genericNames[strings.ToLower(n)] && !strings.Contains(parts[i], ".") {
			return n
		}
	}
	return sanitize(last)
}

var scriptExts = []string{".js", ".mjs", ".cjs", ".ts", ".py"}

func hasScriptExt(w string) bool {
	for _, ext := range scriptExts {
		if strings.HasSuffix(w, ext) {
			return true
		}
	}
	return false
}

func baseOf(w string) string {
	w = strings.TrimRight(w, "/\\")
	if j := strings.LastIndexAny(w, "/\\"); j >= 0 {
		w = w[j+1:]
	}
	return w
}

// pathName names a path or a word after its last element without a
// script extension or a version ("pkg@1.2", "pkg==1.2"), walking up over
// generic folder names; "" when nothing in it names anything.
func pathName(w string) string {
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '/' || r == '\\' })
	var fallback string
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		for _, ext := range scriptExts {
			p = strings.TrimSuffix(p, ext)
		}
		p, _, _ = strings.Cut(p, "==")
		if j := strings.LastIndex(p, "@"); j > 0 {
			p = p[:j]
		}
		n := sanitize(p)
		if n == "" {
			continue
		}
		if !genericNames[strings.ToLower(n)] {
			return n
		}
		if fallback == "" {
			fallback = n
		}
	}
	return fallback
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}
