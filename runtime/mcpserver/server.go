// Package mcpserver serves toolgate's progressive discovery and gateway to
// any MCP client (desktop assistants, IDEs, other agent frameworks): it
// stands between the client and a large catalog (tool files and upstream
// MCP servers) and shows the client two tools instead of hundreds:
//
//   - find_tools(query): the caller's authorized shortlist for a request,
//     one line per tool (name, summary, whether it is read-only or
//     irreversible), or "select:<name>" to load a tool by name;
//   - call_tool(name, arguments[, step]): the call, through the gateway
//     (authorization again, validation, idempotency, approvals, audit).
//
// For clients that support notifications/tools/list_changed, each tool a
// session finds is also added to that session's tool list as a first-class
// tool (with its full input schema) that calls through the gateway too.
//
// The principal is fixed by configuration over stdio and taken from the
// bearer token of every request over Streamable HTTP; a session belongs to
// the principal that opened it. Discovery works on that principal's
// authorized view only, so a tool it may not use can be neither found nor
// called (DESIGN.md invariants 1 and 2).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/findtools"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Authenticator maps an HTTP request (its bearer token) to a principal. It
// returns an error for a missing or unknown token.
type Authenticator func(r *http.Request) (tools.Principal, error)

// ErrUnauthenticated is returned to a client whose request carries no
// valid credentials.
var ErrUnauthenticated = errors.New("mcpserver: unauthenticated")

// Options configures a Server. A nil *Options means all defaults; each
// field's zero value is documented.
type Options struct {
	// Principal is the caller over stdio. It must be set to serve stdio.
	Principal tools.Principal
	// Authenticate maps each HTTP request to a principal. It must be set to
	// serve HTTP.
	Authenticate Authenticator
	// K is the number of tools find_tools returns. Zero means 5.
	K int
	// NoFirstClass turns off adding found tools to the session's tool list.
	NoFirstClass bool
	// MaxFirstClass bounds the found tools a session's list holds (oldest
	// are removed first). Zero means 16.
	MaxFirstClass int
	// Logger receives errors. Nil means slog.Default().
	Logger *slog.Logger
	// Name and Version identify the server to clients. Zero means
	// "toolgate" and "0.1.0".
	Name, Version string
}

// Server is the MCP facade over a registry, a discoverer and a gateway.
// It is safe for concurrent use by many sessions.
type Server struct {
	reg  *tools.Registry
	disc *discovery.Discoverer
	gw   *gateway.Gateway
	opts Options
}

// New returns a Server. gw must execute over reg.
func New(reg *tools.Registry, disc *discovery.Discoverer, gw *gateway.Gateway, opts *Options) (*Server, error) {
	if reg == nil || disc == nil || gw == nil {
		return nil, errors.New("mcpserver: registry, discoverer and gateway are required")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.K < 0 || o.MaxFirstClass < 0 {
		return nil, errors.New("mcpserver: K and MaxFirstClass must not be negative")
	}
	if o.K == 0 {
		o.K = 5
	}
	if o.MaxFirstClass == 0 {
		o.MaxFirstClass = 16
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Name == "" {
		o.Name = "toolgate"
	}
	if o.Version == "" {
		o.Version = "0.1.0"
	}
	return &Server{reg: reg, disc: disc, gw: gw, opts: o}, nil
}

// Run serves one session over t (sdk.StdioTransport for stdio) as
// Options.Principal until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	if s.opts.Principal.ID == "" || s.opts.Principal.Tenant == "" {
		return errors.New("mcpserver: Options.Principal (ID and tenant) is required to serve stdio")
	}
	return s.newSession(s.opts.Principal).srv.Run(ctx, t)
}

// Handler returns the Streamable HTTP handler. Every request must carry a
// bearer token Options.Authenticate accepts (else 401), and requests of an
// existing session must come from the principal that opened it.
func (s *Server) Handler() (http.Handler, error) {
	if s.opts.Authenticate == nil {
		return nil, errors.New("mcpserver: Options.Authenticate is required to serve HTTP")
	}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		p, err := s.opts.Authenticate(r)
		if err != nil {
			return nil
		}
		return s.newSession(p).srv
	}, &sdk.StreamableHTTPOptions{Logger: s.opts.Logger})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.opts.Authenticate(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// session is one client's MCP session: its server (so its tool list can
// grow), its owner, its step counter and its first-class tools.
type session struct {
	s     *Server
	srv   *sdk.Server
	owner tools.Principal
	id    string // the gateway session id

	mu    sync.Mutex
	step  int
	added []string // names of first-class tools, oldest first
}

var sessionSeq struct {
	sync.Mutex
	n int
}

func (s *Server) newSession(owner tools.Principal) *session {
	sessionSeq.Lock()
	sessionSeq.n++
	n := sessionSeq.n
	sessionSeq.Unlock()
	ss := &session{s: s, owner: owner, id: fmt.Sprintf("mcp-%s-%d", owner.ID, n)}
	ss.srv = sdk.NewServer(&sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version}, &sdk.ServerOptions{
		Instructions: "This server fronts a large tool catalog. Call find_tools with what you need to do, then call_tool with a tool it found (or call a found tool directly when your client shows it).",
		Logger:       s.opts.Logger,
	})
	ss.srv.AddTool(&sdk.Tool{
		Name:        findtools.Name,
		Description: findtools.Description,
		InputSchema: findtools.Schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, ss.findTools)
	ss.srv.AddTool(&sdk.Tool{
		Name:        "call_tool",
		Description: "Call a tool found with find_tools. To retry a call safely, resend it with the same step: the gateway then replays the first outcome instead of running it again.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The tool's name as find_tools gave it."},"arguments":{"type":"object","description":"The tool's arguments."},"step":{"type":"integer","minimum":1,"description":"Optional: the step number of this call in the session; the same step with the same arguments is never executed twice."}},"required":["name"],"additionalProperties":false}`),
	}, ss.callTool)
	return ss
}

// caller authenticates the request: the HTTP bearer, or the configured
// stdio principal; it must be the session's owner.
func (ss *session) caller(extra *sdk.RequestExtra) (tools.Principal, error) {
	p := ss.owner
	if extra != nil && extra.Header != nil && ss.s.opts.Authenticate != nil {
		r := &http.Request{Header: extra.Header}
		var err error
		if p, err = ss.s.opts.Authenticate(r); err != nil {
			return tools.Principal{}, ErrUnauthenticated
		}
		if p.ID != ss.owner.ID || p.Tenant != ss.owner.Tenant {
			return tools.Principal{}, fmt.Errorf("%w: the session belongs to another principal", ErrUnauthenticated)
		}
	}
	return p, nil
}

func (ss *session) findTools(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	p, err := ss.caller(req.Extra)
	if err != nil {
		return toolError(err.Error()), nil
	}
	query, err := findtools.ParseArguments(req.Params.Arguments)
	if err != nil {
		return toolError(err.Error()), nil
	}
	res, err := findtools.Search(ctx, ss.s.disc, ss.s.reg.Snapshot().Authorize(p), query, &findtools.Options{K: ss.s.opts.K})
	if err != nil {
		return nil, err
	}
	if !ss.s.opts.NoFirstClass {
		for _, t := range res.Tools {
			ss.addFirstClass(t)
		}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: findtools.Answer(res, toolID, "")}}}, nil
}

func toolID(t *tools.Tool) string { return t.ID }

// addFirstClass adds a found tool to the session's list under a name MCP
// clients accept; the SDK notifies clients with tools/list_changed.
func (ss *session) addFirstClass(t *tools.Tool) {
	name := tools.ModelName(t.ID, func(s string) bool { return s == "find_tools" || s == "call_tool" })
	ss.mu.Lock()
	for _, n := range ss.added {
		if n == name {
			ss.mu.Unlock()
			return
		}
	}
	ss.added = append(ss.added, name)
	var drop []string
	if over := len(ss.added) - ss.s.opts.MaxFirstClass; over > 0 {
		drop = append(drop, ss.added[:over]...)
		ss.added = ss.added[over:]
	}
	ss.mu.Unlock()
	if len(drop) > 0 {
		ss.srv.RemoveTools(drop...)
	}
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Card.Summary
	}
	id := t.ID
	ss.srv.AddTool(&sdk.Tool{
		Name:        name,
		Description: desc,
		InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: t.Card.ReadOnly, DestructiveHint: &t.Card.Irreversible, IdempotentHint: t.Card.Idempotent},
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return ss.execute(ctx, req.Extra, id, req.Params.Arguments, 0)
	})
}

func (ss *session) callTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var args struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Step      int             `json:"step"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Name == "" {
		return toolError(`call_tool needs {"name": "...", "arguments": {...}}`), nil
	}
	p, err := ss.caller(req.Extra)
	if err != nil {
		return toolError(err.Error()), nil
	}
	id := args.Name
	t, err := findtools.Lookup(ss.s.reg.Snapshot().Authorize(p), args.Name)
	var amb *findtools.AmbiguousError
	switch {
	case err == nil:
		id = t.ID
	case errors.As(err, &amb):
		body, _ := json.Marshal(map[string]any{"success": false, "error_type": gateway.UnknownTool,
			"message": amb.Error(), "retryable": true, "details": map[string]any{"candidates": amb.Candidates}})
		return toolError(string(body)), nil
	}
	return ss.execute(ctx, req.Extra, id, args.Arguments, args.Step)
}

// execute runs a call through the gateway. step 0 takes the session's next
// step. Gateway refusals become tool errors carrying the contract's error
// body, so the client's model can read and fix them.
func (ss *session) execute(ctx context.Context, extra *sdk.RequestExtra, id string, args json.RawMessage, step int) (*sdk.CallToolResult, error) {
	p, err := ss.caller(extra)
	if err != nil {
		return toolError(err.Error()), nil
	}
	// An explicit step names a slot the client may resend; automatic steps
	// continue after the highest step seen, so they never collide with one.
	ss.mu.Lock()
	if step <= 0 {
		ss.step++
		step = ss.step
	} else {
		ss.step = max(ss.step, step)
	}
	ss.mu.Unlock()
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	res, err := ss.s.gw.Execute(ctx, gateway.Call{Principal: p, SessionID: ss.id, Step: step, Tool: id, Arguments: args})
	if err != nil {
		var ge *gateway.Error
		if !errors.As(err, &ge) {
			return nil, err
		}
		body, _ := json.Marshal(map[string]any{"success": false, "error_type": ge.Type, "message": ge.Message,
			"retryable": ge.Retryable, "details": ge.Details, "approval_id": ge.ApprovalID, "step": step})
		return toolError(string(body)), nil
	}
	body, _ := json.Marshal(map[string]any{"success": true, "result": res.Value, "cached": res.Cached, "step": step})
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}}, nil
}

func toolError(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}
