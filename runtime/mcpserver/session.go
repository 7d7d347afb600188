package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// MaxStep is the highest step a client may give call_tool. Steps the
// server takes itself continue after the highest step seen, up to
// maxAutoStep, so a client that sends MaxStep still has 2^30 calls left.
const MaxStep = 1 << 30

// maxAutoStep is the last step the session takes by itself; it fits every
// store's step column (a signed 32-bit integer).
const maxAutoStep = 1<<31 - 1

// callToolSchema is call_tool's input schema; parseCall enforces it.
var callToolSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"name":{"type":"string","minLength":1,"maxLength":256,"description":"The tool's name as find_tools gave it."},` +
	`"arguments":{"type":"object","description":"The tool's arguments."},` +
	`"step":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(MaxStep) + `,"description":"Optional: the step number of this call in the session; the same step with the same arguments is never executed twice."}},` +
	`"required":["name"],"additionalProperties":false}`)

// session is one client's MCP session: its server (so its tool list can
// grow), its owner, its step counter and its first-class tools.
type session struct {
	s     *Server
	srv   *sdk.Server
	owner tools.Principal
	id    string // the MCP session ID over HTTP, and the gateway session ID
	http  bool   // served over Streamable HTTP: each request carries its principal

	// list serialises the edits of the session's tool list (adding a
	// found tool, dropping one that left the catalog), so that the list
	// the SDK holds and added agree. It is taken before mu.
	list sync.Mutex

	mu    sync.Mutex
	step  int
	added []string // names of the first-class tools in the list, oldest first
	// shown is, for each name in added, the definition the list shows
	// (its JSON), so a tool whose definition changed is listed anew.
	shown map[string]string
	// names binds each first-class name the session has listed to its
	// tool ID for the session's whole life: a name that left the list
	// ([Options.MaxFirstClass], the tool leaving the catalog) is never given
	// to another tool, and call_tool takes it for its tool alone
	// (docs/design.md invariant 8).
	names *tools.SessionNames
	// watching: the session follows the registry's changes (see watch)
	// until done is closed (see close).
	watching bool
	done     chan struct{}
}

// newSessionID returns a random session ID: 128 bits, so IDs never repeat
// across runs of the server that share a store.
func newSessionID() string { return "mcp-" + rand.Text() }

func (s *Server) newSession(owner tools.Principal, overHTTP bool) *session {
	ss := &session{s: s, owner: owner, id: newSessionID(), http: overHTTP,
		names: tools.NewSessionNames(owner.Tenant, findtools.Name, callToolName), done: make(chan struct{})}
	ss.srv = sdk.NewServer(&sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version}, &sdk.ServerOptions{
		Instructions: "This server fronts a large tool catalog. Call find_tools with what you need to do, then call_tool with a tool it found (or call a found tool directly when your client shows it).",
		Logger:       s.opts.Logger,
		GetSessionID: func() string { return ss.id },
		SetCacheable: s.cacheable,
	})
	ss.srv.AddReceivingMiddleware(traceContext)
	ss.srv.AddSendingMiddleware(s.elicitTimeout)
	ss.srv.AddTool(&sdk.Tool{
		Name:        findtools.Name,
		Description: findtools.Description,
		InputSchema: findtools.Schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, ss.findTools)
	ss.srv.AddTool(&sdk.Tool{
		Name:        callToolName,
		Description: "Call a tool found with find_tools. To retry a call safely, resend it with the same step: the gateway then replays the first outcome instead of running it again.",
		InputSchema: callToolSchema,
	}, ss.callTool)
	return ss
}

// callToolName is the name of the session's call_tool.
const callToolName = "call_tool"

// close ends the session's watch of the registry (see watch), if any,
// once its MCP connection has ended. It may be called more than once.
func (ss *session) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	select {
	case <-ss.done:
	default:
		close(ss.done)
	}
}

// caller is the principal of a request: the one the HTTP layer
// authenticated (see Handler), or the configured stdio principal. It must
// be the session's owner (the SDK checks this before the request reaches
// a tool; this is the second line).
func (ss *session) caller(extra *sdk.RequestExtra) (tools.Principal, error) {
	if !ss.http {
		return ss.owner, nil
	}
	var ti *auth.TokenInfo
	if extra != nil {
		ti = extra.TokenInfo
	}
	p, ok := principalOf(ti)
	if !ok {
		return tools.Principal{}, ErrUnauthenticated
	}
	if p.ID != ss.owner.ID || p.Tenant != ss.owner.Tenant {
		return tools.Principal{}, fmt.Errorf("%w: the session belongs to another principal", ErrUnauthenticated)
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
	view := ss.s.offered(ss.s.reg.Snapshot().Authorize(p))
	res, err := findtools.Search(ctx, ss.s.disc, view, query, &findtools.Options{K: ss.s.opts.K, Alias: ss.listed, Session: ss.id})
	if err != nil {
		ss.s.opts.Logger.ErrorContext(ctx, "mcpserver: find_tools failed", "session", ss.id, "err", err)
		return toolError("the search failed; try again"), nil
	}
	if !ss.s.opts.NoFirstClass {
		for _, t := range res.Tools {
			ss.addFirstClass(ctx, view.Snapshot(), t)
		}
	}
	return textResult(findtools.Answer(res, toolID, "")), nil
}

func toolID(t *tools.Tool) string { return t.ID }

// listed returns the ID of the tool the session listed as name, and
// whether it did (the tool may have left the catalog since).
func (ss *session) listed(name string) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.names.ID(name)
}

// addFirstClass adds a found tool to the session's list under its
// first-class name ([tools.SessionNames]: its bare name, or its
// server-qualified name when another tool of the tenant's catalog,
// whatever its scopes, is shown alike or the session has listed that
// name for another tool); the SDK notifies clients with
// tools/list_changed. The session then follows the registry, so that
// the tool leaves the list when it leaves the catalog (see watch).
func (ss *session) addFirstClass(ctx context.Context, snap *tools.Snapshot, t *tools.Tool) {
	ss.list.Lock()
	defer ss.list.Unlock()
	ss.mu.Lock()
	name, fresh := ss.names.Name(snap, t)
	if slices.Contains(ss.added, name) {
		ss.mu.Unlock()
		return
	}
	ss.added = append(ss.added, name)
	var drop []string
	if over := len(ss.added) - ss.s.opts.MaxFirstClass; over > 0 {
		drop = append(drop, ss.added[:over]...)
		ss.added = ss.added[over:]
		for _, n := range drop {
			delete(ss.shown, n)
		}
	}
	watch := !ss.watching
	ss.watching = true
	ss.mu.Unlock()
	if watch {
		ss.watch()
	}
	if len(drop) > 0 {
		ss.srv.RemoveTools(drop...)
	}
	ss.show(name, t)
	if fresh {
		if plain := tools.ModelName(t.ID, reserved); name != plain {
			ss.s.opts.Logger.InfoContext(ctx, "mcpserver: tool name shared, shown server-qualified",
				"session", ss.id, "tool", t.ID, "name", name)
		}
	}
	// The tool may have left the catalog since snap, or changed: follow
	// it now rather than at the registry's next change.
	ss.follow(ctx, ss.s.reg.Snapshot())
}

// show lists t under name, first-class (the SDK notifies clients with
// tools/list_changed), unless the list shows exactly that already, and
// reports whether it listed it; the caller holds ss.list.
func (ss *session) show(name string, t *tools.Tool) bool {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Card.Summary
	}
	irreversible := t.Card.Irreversible
	def := &sdk.Tool{
		Name:        name,
		Description: desc,
		InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: t.Card.ReadOnly, DestructiveHint: &irreversible, IdempotentHint: t.Card.Idempotent},
	}
	b, _ := json.Marshal(def)
	shown := t.ID + "\x00" + string(b)
	ss.mu.Lock()
	if ss.shown[name] == shown {
		ss.mu.Unlock()
		return false
	}
	if ss.shown == nil {
		ss.shown = map[string]string{}
	}
	ss.shown[name] = shown
	ss.mu.Unlock()
	id := t.ID
	ss.srv.AddTool(def, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return ss.execute(ctx, req, id, req.Params.Arguments, 0)
	})
	return true
}

// follow brings the session's first-class list in line with snap: the
// tools that left the catalog leave the list (dropLeft), and a tool whose
// definition changed (its server's list_changed: a description, a schema,
// its risk) is listed anew under its name, so a client never shows a
// stale schema or a tool read-only that is no longer. The caller holds
// ss.list.
func (ss *session) follow(ctx context.Context, snap *tools.Snapshot) {
	ss.dropLeft(ctx, snap)
	ss.mu.Lock()
	names := slices.Clone(ss.added)
	ids := make([]string, len(names))
	for i, name := range names {
		ids[i], _ = ss.names.ID(name)
	}
	ss.mu.Unlock()
	for i, name := range names {
		j, ok := snap.Lookup(ids[i])
		if !ok {
			continue
		}
		if t := snap.Tool(j); ss.show(name, t) {
			ss.s.opts.Logger.InfoContext(ctx, "mcpserver: a first-class tool's definition changed, listed anew",
				"session", ss.id, "tool", t.ID, "name", name)
		}
	}
}

// reserved reports the names of the session's own tools.
func reserved(name string) bool { return name == findtools.Name || name == callToolName }

// watch follows the registry's changes until the session closes: after
// each, the first-class tools that left the catalog (removed, or
// quarantined because their pinned definition changed, tools/mcp) leave
// the session's list, those whose definition changed are listed anew
// (see follow), and the SDK notifies clients with tools/list_changed.
// Their names stay bound (see session.names).
func (ss *session) watch() {
	notice := make(chan struct{}, 1)
	ss.s.reg.Subscribe(notice)
	go func() {
		defer ss.s.reg.Unsubscribe(notice)
		for {
			select {
			case <-ss.done:
				return
			case <-notice:
				ss.list.Lock()
				ss.follow(context.Background(), ss.s.reg.Snapshot())
				ss.list.Unlock()
			}
		}
	}()
}

// dropLeft removes from the session's list the first-class tools that
// snap's catalog no longer has; the caller holds ss.list.
func (ss *session) dropLeft(ctx context.Context, snap *tools.Snapshot) {
	ss.mu.Lock()
	var drop []string
	kept := ss.added[:0]
	for _, name := range ss.added {
		if ss.names.Left(snap, name) {
			drop = append(drop, name)
		} else {
			kept = append(kept, name)
		}
	}
	ss.added = kept
	for _, name := range drop {
		delete(ss.shown, name)
	}
	ss.mu.Unlock()
	if len(drop) > 0 {
		ss.srv.RemoveTools(drop...)
		ss.s.opts.Logger.InfoContext(ctx, "mcpserver: first-class tools left the catalog, removed from the list",
			"session", ss.id, "names", drop)
	}
}

// callArgs are call_tool's arguments.
type callArgs struct {
	Name      string
	Arguments json.RawMessage // the bytes the client sent; {} when absent or null
	Step      int             // 0: the session's next step
}

// errCallArgs is wrapped by parseCall's errors.
var errCallArgs = errors.New(`call_tool needs {"name": "...", "arguments": {...}, "step"?: N}`)

// parseCall checks call_tool's arguments against callToolSchema: an object
// with no member twice and no member beside name (a string of 1 to 256
// bytes), arguments (an object) and step (an integer from 1 to [MaxStep],
// written as digits). The tool's arguments are kept as the client's bytes:
// the gateway validates them, on the numbers as written.
func parseCall(raw json.RawMessage) (callArgs, error) {
	var out callArgs
	if err := jcs.Check(raw); err != nil {
		return out, fmt.Errorf("%w: %v", errCallArgs, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return out, fmt.Errorf("%w: the arguments are not an object", errCallArgs)
	}
	for k := range members {
		if k != "name" && k != "arguments" && k != "step" {
			return out, fmt.Errorf("%w: unknown member %q", errCallArgs, k)
		}
	}
	name, ok := members["name"]
	if !ok {
		return out, fmt.Errorf("%w: name is missing", errCallArgs)
	}
	if err := json.Unmarshal(name, &out.Name); err != nil || string(name) == "null" {
		return out, fmt.Errorf("%w: name must be a string", errCallArgs)
	}
	if out.Name == "" || len(out.Name) > 256 {
		return out, fmt.Errorf("%w: name must be 1 to 256 bytes", errCallArgs)
	}
	switch a := bytes.TrimSpace(members["arguments"]); {
	case len(a) == 0 || string(a) == "null":
		out.Arguments = json.RawMessage(`{}`)
	case a[0] == '{':
		out.Arguments = a
	default:
		return out, fmt.Errorf("%w: arguments must be an object", errCallArgs)
	}
	if st, ok := members["step"]; ok {
		n, err := strconv.Atoi(string(st))
		if err != nil || n < 1 || n > MaxStep || st[0] == '0' || st[0] == '+' {
			return out, fmt.Errorf("%w: step must be an integer from 1 to %d written as digits, not %.40s", errCallArgs, MaxStep, st)
		}
		out.Step = n
	}
	return out, nil
}

func (ss *session) callTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	args, err := parseCall(req.Params.Arguments)
	if err != nil {
		return callError(gateway.ValidationError, err.Error(), true, nil, 0), nil
	}
	p, err := ss.caller(req.Extra)
	if err != nil {
		return toolError(err.Error()), nil
	}
	// A name the session listed stands for its tool alone, gone or not
	// (no ID is a listed name: IDs hold a '/'). Otherwise the gateway's own
	// reading of a tool name (an ID, or a bare name one tool of the
	// tenant has), as its HTTP contract answers it.
	id, ok := ss.listed(args.Name)
	if !ok {
		var gerr *gateway.Error
		if id, gerr = ss.s.gw.Resolve(p, args.Name); gerr != nil {
			return gatewayError(gerr, args.Step), nil
		}
	}
	return ss.execute(ctx, req, id, args.Arguments, args.Step)
}

// execute runs a call through the gateway. step 0 takes the session's next
// step. A call carrying a request state (requestState, from a held call's
// input_required result) resumes the call it names, in its gateway slot,
// once the state is verified (see resume). Gateway refusals become tool
// errors carrying the contract's error body, so the client's model can
// read and fix them; a call held for approval is answered by held.
func (ss *session) execute(ctx context.Context, req *sdk.CallToolRequest, id string, args json.RawMessage, step int) (*sdk.CallToolResult, error) {
	p, err := ss.caller(req.Extra)
	if err != nil {
		return toolError(err.Error()), nil
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	sessionID := ss.id
	if req.Params.RequestState != "" {
		var refused *sdk.CallToolResult
		if sessionID, step, refused = ss.resume(req, p, id, args); refused != nil {
			return refused, nil
		}
	} else if step, err = ss.nextStep(step); err != nil {
		return callError(gateway.ValidationError, err.Error(), false, nil, 0), nil
	}
	res, err := ss.s.gw.Execute(ctx, gateway.Call{Principal: p, SessionID: sessionID, Step: step, Tool: id, Arguments: args})
	// The client chose the tool, whatever the gateway answered: the
	// discovery log links the call to the session's searches.
	ss.s.disc.RecordOutcome(ctx, ss.s.reg.Snapshot().Authorize(p),
		discovery.Outcome{Session: ss.id, Source: discovery.SourceCall, Tools: []string{id}})
	if err != nil {
		var ge *gateway.Error
		if !errors.As(err, &ge) {
			ss.s.opts.Logger.ErrorContext(ctx, "mcpserver: gateway failed", "session", ss.id, "tool", id, "err", err)
			return callError(gateway.Internal, "the call failed inside the server", false, nil, step), nil
		}
		if ge.Type == gateway.ConfirmationRequired {
			return ss.held(ctx, req, p, id, args, sessionID, step, ge), nil
		}
		return gatewayError(ge, step), nil
	}
	body, _ := json.Marshal(map[string]any{"success": true, "result": res.Value, "cached": res.Cached, "step": step,
		"attempts": res.Attempts, "previous_attempt_uncertain": res.PreviousUncertain})
	out := textResult(string(body))
	out.Meta = sdk.Meta{MetaAttempts: res.Attempts, MetaPreviousUncertain: res.PreviousUncertain}
	return out, nil
}

// nextStep returns the gateway step of a call: step when the client gave
// one (1 to [MaxStep]), else the session's next. An explicit step names a
// slot the client may resend; automatic steps continue after the highest
// step seen, so they never collide with one.
func (ss *session) nextStep(step int) (int, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if step > 0 {
		ss.step = max(ss.step, step)
		return step, nil
	}
	if ss.step >= maxAutoStep {
		return 0, errors.New("the session has taken all its steps; give an explicit step or open a new session")
	}
	ss.step++
	return ss.step, nil
}

// The _meta fields of a call_tool result: how many executions the call's
// slot has had, and whether an earlier one's outcome was uncertain (the
// handler then ran again with the same idempotency key; see
// [gateway.Result]). A client that cannot rely on the downstream's
// deduplication reconciles when [MetaPreviousUncertain] is true.
const (
	MetaAttempts          = "io.toolgate/attempts"
	MetaPreviousUncertain = "io.toolgate/previous-attempt-uncertain"
)

// gatewayError is a gateway refusal in the contract's error body, with
// the step the client resends to retry it: as over HTTP, details and
// approval_id only when there are some, and retry_after (whole seconds)
// when the gateway says when to retry.
func gatewayError(ge *gateway.Error, step int) *sdk.CallToolResult {
	m := map[string]any{"success": false, "error_type": ge.Type, "message": ge.Message, "retryable": ge.Retryable}
	if ge.Details != nil {
		m["details"] = ge.Details
	}
	if ge.ApprovalID != "" {
		m["approval_id"] = ge.ApprovalID
	}
	if ge.RetryAfter > 0 {
		m["retry_after"] = int64(math.Ceil(ge.RetryAfter.Seconds()))
	}
	if ge.Code != "" {
		m["code"] = ge.Code
	}
	if len(ge.Candidates) > 0 {
		m["candidates"] = ge.Candidates
	}
	if step > 0 {
		m["step"] = step
	}
	if ge.Attempts > 0 {
		m["attempts"] = ge.Attempts
	}
	body, _ := json.Marshal(m)
	out := toolError(string(body))
	if ge.Attempts > 0 {
		out.Meta = sdk.Meta{MetaAttempts: ge.Attempts}
	}
	return out
}

// callError is a refusal in the gateway's error body.
func callError(typ gateway.ErrorType, msg string, retryable bool, details any, step int) *sdk.CallToolResult {
	m := map[string]any{"success": false, "error_type": typ, "message": msg, "retryable": retryable}
	if details != nil {
		m["details"] = details
	}
	if step > 0 {
		m["step"] = step
	}
	body, _ := json.Marshal(m)
	return toolError(string(body))
}

func textResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

func toolError(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}
