package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
)

func init() {
	// A second requester who may refund, for the wrong-principal case.
	tokens["admin2-token"] = tools.Principal{ID: "admin2", Tenant: "acme", Scopes: []string{"accounts:read", "billing:admin"}}
}

var approvalIDRe = regexp.MustCompile(`apr_[A-Za-z0-9_-]+`)

// grant sends the approver's own authenticated request for approval id
// to the server's approval endpoint and returns its status.
func grant(t *testing.T, url, token, id string) int {
	t.Helper()
	return decideApproval(t, url, token, id, "")
}

// deny is grant with a denial.
func deny(t *testing.T, url, token, id string) int {
	t.Helper()
	return decideApproval(t, url, token, id, `{"decision":"deny"}`)
}

// decideApproval posts body to approval id's endpoint as token.
func decideApproval(t *testing.T, url, token, id, body string) int {
	t.Helper()
	resp, _ := testenv.Post(t, context.WithoutCancel(t.Context()), url+mcpserver.ApprovalsPath+id, token, body)
	return resp.StatusCode
}

// TestApprovalInBand: at every revision, a client that can answer an
// elicitation gets the held call's approval request in-band (2026-07-28:
// an input_required result, which the Go SDK client fulfils and retries
// with the request state; before: an elicitation the server sends). The
// requester cannot grant it itself; another principal holding
// approvals:grant does, with its own token, while the request waits; the
// client accepts and the same call runs, once.
func TestApprovalInBand(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			f := newFixture(t)
			ts := f.serveHTTP(t)
			var asked atomic.Int32
			var selfStatus, opsStatus atomic.Int32
			cs := connectAt(t, ts.URL, "admin-token", rev, &sdk.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked.Add(1)
					id := approvalIDRe.FindString(req.Params.Message)
					if id == "" {
						t.Errorf("the elicitation names no approval: %q", req.Params.Message)
						return &sdk.ElicitResult{Action: "cancel"}, nil
					}
					selfStatus.Store(int32(grant(t, ts.URL, "admin-token", id)))
					opsStatus.Store(int32(grant(t, ts.URL, "ops-token", id)))
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
			})
			out, isErr := callTool(t, cs, map[string]any{"name": "bank/issue_full_refund", "arguments": map[string]any{"transaction_id": "tx-5"}})
			if isErr || out["success"] != true {
				t.Fatalf("the held call = %v, want success once approved in-band", out)
			}
			if asked.Load() != 1 {
				t.Errorf("the client was asked %d times, want once", asked.Load())
			}
			if selfStatus.Load() != http.StatusForbidden || opsStatus.Load() != http.StatusOK {
				t.Errorf("grant by the requester = %d, by ops = %d; want 403 and 200", selfStatus.Load(), opsStatus.Load())
			}
			if n := f.refunds.Load(); n != 1 {
				t.Errorf("the refund ran %d times, want 1", n)
			}
		})
	}
}

// TestApprovalDeniedInBand: at every revision, an approver who denies
// the held call while the client's in-band request waits ends it: the
// client's resume gets PERMISSION_DENIED with the approval_id, the same
// call sent again at the same step or a new one gets it too without
// anyone being asked, and nothing runs.
func TestApprovalDeniedInBand(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			f := newFixture(t)
			ts := f.serveHTTP(t)
			var asked, denied atomic.Int32
			cs := connectAt(t, ts.URL, "admin-token", rev, &sdk.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked.Add(1)
					denied.Store(int32(deny(t, ts.URL, "ops-token", approvalIDRe.FindString(req.Params.Message))))
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
			})
			// The second send is at the same step, the third at a new
			// one: the denial covers the session, so nobody is asked again.
			//testlint:rows the sends are one session's, in order, each after the denial
			for i, step := range []int{4, 4, 5} {
				call := map[string]any{"name": "bank/issue_full_refund", "arguments": refundArgs("tx-9"), "step": step}
				out, isErr := callTool(t, cs, call)
				if !isErr || out["error_type"] != string(gateway.PermissionDenied) || !approvalIDRe.MatchString(fmt.Sprint(out["approval_id"])) {
					t.Fatalf("send %d of the denied call (step %d) = %v, want PERMISSION_DENIED with the approval_id", i+1, step, out)
				}
			}
			if asked.Load() != 1 || denied.Load() != http.StatusOK {
				t.Errorf("the client was asked %d times (want once); the denial answered %d (want 200)", asked.Load(), denied.Load())
			}
			if n := f.refunds.Load(); n != 0 {
				t.Errorf("the refund ran %d times, want 0", n)
			}
		})
	}
}

// TestApprovalAcceptedUngranted: a client of a session revision that
// accepts the in-band request before anyone granted the approval gets the
// refusal with the approval_id (the server asks once per request); once
// granted, the same call at the same step runs, once.
func TestApprovalAcceptedUngranted(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	cs := connectAt(t, ts.URL, "admin-token", sessionRevision, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	call := map[string]any{"name": "bank/issue_full_refund", "arguments": refundArgs("tx-3"), "step": 2}
	out, isErr := callTool(t, cs, call)
	id, _ := out["approval_id"].(string)
	if !isErr || out["error_type"] != string(gateway.ConfirmationRequired) || id == "" {
		t.Fatalf("accepted without a grant = %v, want CONFIRMATION_REQUIRED with the approval_id", out)
	}
	if grant(t, ts.URL, "ops-token", id) != http.StatusOK {
		t.Fatal("ops could not grant")
	}
	if out, isErr = callTool(t, cs, call); isErr || out["success"] != true {
		t.Errorf("the granted call = %v, want success", out)
	}
	if n := f.refunds.Load(); n != 1 {
		t.Errorf("the refund ran %d times, want 1", n)
	}
}

// TestTypeScriptClientApproves: the official TypeScript SDK client
// (whose newest release speaks 2025-11-25, not 2026-07-28) gets the held
// refund's approval request as an elicitation; its own grant is refused,
// the approver's accepted, and the call completes, once.
func TestTypeScriptClientApproves(t *testing.T) {
	modules := filepath.Dir(filepath.Dir(testenv.NodeModule(t, "@modelcontextprotocol/sdk")))
	f := newFixture(t)
	ts := f.serveHTTP(t)
	text := runTSClient(t, modules, ts.URL, "approve", "TOKEN=admin-token", "APPROVER_TOKEN=ops-token",
		"CALL=bank/issue_full_refund", `ARGS={"transaction_id":"tx-ts"}`)
	var out struct {
		OK                       bool
		Error                    string
		Asked                    int
		SelfGrant, ApproverGrant int
		Call                     map[string]any
	}
	if err := json.Unmarshal(text, &out); err != nil || !out.OK {
		t.Fatalf("client output %s: %v", text, err)
	}
	if out.Asked != 1 || out.SelfGrant != http.StatusForbidden || out.ApproverGrant != http.StatusOK {
		t.Errorf("asked %d times, self grant %d, approver grant %d; want once, 403, 200", out.Asked, out.SelfGrant, out.ApproverGrant)
	}
	if out.Call["success"] != true {
		t.Errorf("the approved call = %v, want success", out.Call)
	}
	if n := f.refunds.Load(); n != 1 {
		t.Errorf("the refund ran %d times, want 1", n)
	}
}

// heldClient is a 2026-07-28 client that answers elicitations but leaves
// input_required results to the test (no automatic retry).
func heldClient(t *testing.T, url, token string) *sdk.ClientSession {
	return connectAt(t, url, token, "2026-07-28", &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
}

func refundArgs(tx string) map[string]any { return map[string]any{"transaction_id": tx} }

// resumeWith sends call_tool for the refund with args, the request state
// and the approval answer action ("" for none).
func resumeWith(t *testing.T, cs *sdk.ClientSession, args map[string]any, state, action string) *sdk.CallToolResult {
	t.Helper()
	p := &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "bank/issue_full_refund", "arguments": args}, RequestState: state}
	if action != "" {
		p.InputResponses = sdk.InputResponseMap{mcpserver.ApprovalInput: &sdk.ElicitResult{Action: action}}
	}
	res, err := cs.CallTool(t.Context(), p)
	if err != nil {
		t.Fatalf("call_tool: %v", err)
	}
	return res
}

// TestApprovalState: the request state of a held call resumes that call
// only: in the slot it was held in (a resent resumed request replays,
// never runs again), for its principal, tool and canonical arguments, and
// until it expires. An altered, expired, replayed-elsewhere or
// other-principal state, changed arguments and a declined request each
// run nothing.
func TestApprovalState(t *testing.T) {
	f := newFixture(t)
	srv, ts := f.serveWith(t, mcpserver.Options{StateTTL: time.Minute})
	var clock atomic.Int64
	clock.Store(time.Now().Unix())
	mcpserver.SetClock(srv, func() time.Time { return time.Unix(clock.Load(), 0) })
	cs := heldClient(t, ts.URL, "admin-token")

	args := refundArgs("tx-7")
	first := resumeWith(t, cs, args, "", "")
	el, _ := first.InputRequests[mcpserver.ApprovalInput].(*sdk.ElicitParams)
	if !first.NeedsInput() || el == nil || first.RequestState == "" || len(first.Content) != 0 {
		t.Fatalf("the held call = %+v, want input_required with the approval elicitation and a request state", first)
	}
	id := approvalIDRe.FindString(el.Message)
	state := first.RequestState

	// Resumed before anyone granted it: still held, asked again.
	if again := resumeWith(t, cs, args, state, "accept"); !again.NeedsInput() {
		t.Errorf("resumed before the grant = %+v, want input_required again", again)
	}
	if grant(t, ts.URL, "ops-token", id) != http.StatusOK {
		t.Fatal("ops could not grant the approval")
	}

	tampered := []byte(state)
	tampered[5] ^= 1
	payload, sig, _ := strings.Cut(state, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"p":"admin"`, `"p":"admin2"`, 1))) + "." + sig
	admin2 := heldClient(t, ts.URL, "admin2-token")
	for _, tc := range []struct {
		name   string
		cs     *sdk.ClientSession
		args   map[string]any
		state  string
		action string
		want   string // in the refusal's text
	}{
		{"altered", cs, args, string(tampered), "accept", "invalid request state"},
		{"signature of another payload", admin2, args, forged, "accept", "invalid request state"},
		{"not a state", cs, args, "nonsense", "accept", "invalid request state"},
		{"too long", cs, args, strings.Repeat("a", 5000), "accept", "longer than"},
		{"another principal", admin2, args, state, "accept", "another principal"},
		{"changed arguments", cs, refundArgs("tx-8"), state, "accept", "arguments changed"},
		{"an added argument", cs, map[string]any{"transaction_id": "tx-7", "note": "x"}, state, "accept", "arguments changed"},
		{"declined", cs, args, state, "decline", "not executed"},
		{"cancelled", cs, args, state, "cancel", "not executed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resumeWith(t, tc.cs, tc.args, tc.state, tc.action)
			out := resultJSON(t, res)
			if !res.IsError || out["success"] != false || !strings.Contains(out["message"].(string), tc.want) {
				t.Errorf("resumed = %v, want a refusal with %q", out, tc.want)
			}
			if msg, _ := out["message"].(string); strings.HasPrefix(msg, "mcpserver:") {
				t.Errorf("the refusal %q names the Go package; a client reads it", msg)
			}
			if n := f.refunds.Load(); n != 0 {
				t.Fatalf("the refund ran %d times", n)
			}
		})
	}

	// The same arguments written otherwise (an escaped character) are the
	// same canonical arguments; a resent resume replays.
	for i, wantCached := range []bool{false, true} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := &sdk.CallToolParams{Name: "call_tool", RequestState: state,
				Arguments:      json.RawMessage(`{"name":"bank/issue_full_refund","arguments":{"transaction_id":"tx\u002d7"}}`),
				InputResponses: sdk.InputResponseMap{mcpserver.ApprovalInput: &sdk.ElicitResult{Action: "accept"}}}
			res, err := cs.CallTool(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			out := resultJSON(t, res)
			if res.IsError || out["success"] != true || out["cached"] != wantCached {
				t.Errorf("resume %d = %v, want success with cached %v", i, out, wantCached)
			}
		})
	}
	if n := f.refunds.Load(); n != 1 {
		t.Errorf("the refund ran %d times, want 1 (a resent resume replays)", n)
	}

	clock.Add(61)
	res := resumeWith(t, cs, args, state, "accept")
	if out := resultJSON(t, res); !res.IsError || !strings.Contains(out["message"].(string), "expired") {
		t.Errorf("resumed after expiry = %v, want expired", out)
	}
	if n := f.refunds.Load(); n != 1 {
		t.Errorf("the refund ran %d times after the expired resume, want 1", n)
	}
}

// TestNoApprover: where no principal but the requester could grant a
// held call, the refusal says so plainly, asks nothing in-band and names
// no approval; without an elicitation capability a held call is refused
// with its approval_id as before, at every revision.
func TestNoApprover(t *testing.T) {
	f := newFixture(t)
	_, ts := f.serveWith(t, mcpserver.Options{HasApprover: func(context.Context, tools.Principal) bool { return false }})
	res := resumeWith(t, heldClient(t, ts.URL, "admin-token"), refundArgs("tx-1"), "", "")
	out := resultJSON(t, res)
	_, named := out["approval_id"]
	if res.NeedsInput() || !res.IsError || out["code"] != mcpserver.CodeNoApprover || named ||
		!strings.Contains(out["message"].(string), "no approver") {
		t.Errorf("held call without an approver = %v, want %s saying there is no approver", out, mcpserver.CodeNoApprover)
	}

	plain := f.serveHTTP(t)
	for _, rev := range revisions {
		t.Run("no elicitation at "+rev, func(t *testing.T) {
			cs := connectAt(t, plain.URL, "admin-token", rev, nil)
			out, isErr := callTool(t, cs, map[string]any{"name": "bank/issue_full_refund", "arguments": refundArgs("tx-2"), "step": 4})
			if !isErr || out["error_type"] != string(gateway.ConfirmationRequired) || out["approval_id"] == "" || out["step"] != 4.0 {
				t.Errorf("held call = %v, want CONFIRMATION_REQUIRED with approval_id and step 4", out)
			}
		})
	}
	if n := f.refunds.Load(); n != 0 {
		t.Errorf("the refund ran %d times", n)
	}
}

// TestApprovalAnswerTimeout: a session-revision client that never answers
// the elicitation of a held call does not hold the call open forever: the
// client is asked once, in-band (elicitation/create), naming the approval
// the gateway holds and how an approver grants it; once
// Options.ElicitTimeout passes without an answer the call is answered
// with an error that says to send it again with the same step, nothing
// runs, and the approval stays; once granted, the same call at the same
// step runs once. The test holds the server's answer deadline until the
// client has the request (SetElicitDeadline), so a host slow enough to
// deliver it late cannot make the deadline pass first: at a real 1 ms it
// expired before sending under -race on a loaded CI host.
func TestApprovalAnswerTimeout(t *testing.T) {
	f := newFixture(t)
	srv, ts := f.serveWith(t, mcpserver.Options{ElicitTimeout: time.Second})
	expire := make(chan struct{}) // closed: the answer deadline has passed
	pass := sync.OnceFunc(func() { close(expire) })
	t.Cleanup(pass) // a failure before it passed must not hold the server's close

	var mu sync.Mutex
	var deadlines []time.Duration // the server's waits for an answer
	mcpserver.SetElicitDeadline(srv, func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
		mu.Lock()
		deadlines = append(deadlines, d)
		mu.Unlock()
		return heldDeadline{ctx, expire}, func() {}
	})
	asks := make(chan *sdk.ElicitParams, 4)
	gaveUp := make(chan struct{})
	cs := connectAt(t, ts.URL, "admin-token", sessionRevision, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asks <- req.Params
			select { // the person never answers; the server gives up
			case <-ctx.Done():
			case <-gaveUp:
			}
			return &sdk.ElicitResult{Action: "cancel"}, nil
		},
	})
	t.Cleanup(func() { close(gaveUp) }) // before the session closes
	call := &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "bank/issue_full_refund", "arguments": refundArgs("tx-9"), "step": 3}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang, not a timing
	defer cancel()
	var res *sdk.CallToolResult
	var callErr error
	answered := make(chan struct{}) // closed once res and callErr are the call's answer
	go func() {
		defer close(answered)
		res, callErr = cs.CallTool(ctx, call)
	}()

	var ask *sdk.ElicitParams
	select {
	case ask = <-asks:
	case <-answered:
		t.Fatalf("the held call was answered without asking the client: %v, %v", res, callErr)
	case <-ctx.Done():
		t.Fatal("the client was never asked to approve the held call")
	}
	id := approvalIDRe.FindString(ask.Message)
	if id == "" || !strings.Contains(ask.Message, "POST "+mcpserver.ApprovalsPath+id) || !strings.Contains(ask.Message, "bank/issue_full_refund") {
		t.Fatalf("the elicitation = %q, want it to name the tool, its approval and the endpoint that grants it", ask.Message)
	}
	entries, err := f.gw.Store().QueryAudit(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var held string
	for _, en := range entries {
		if en.ApprovalID != "" {
			held = en.ApprovalID
		}
	}
	if held != id {
		t.Fatalf("the elicitation names approval %s, the gateway holds %q", id, held)
	}

	pass()
	select {
	case <-answered:
	case <-ctx.Done():
		t.Fatal("the held call still waits for an answer that never comes")
	}
	if callErr == nil || !strings.Contains(callErr.Error(), "same step") || !strings.Contains(callErr.Error(), "within 1s") {
		t.Fatalf("the unanswered held call = %v, %v; want an error saying no answer came within 1s, to send it again with the same step", res, callErr)
	}
	mu.Lock()
	waits := slices.Clone(deadlines)
	mu.Unlock()
	if !slices.Equal(waits, []time.Duration{time.Second}) {
		t.Errorf("the server waited for answers with deadlines %v, want one of Options.ElicitTimeout (1s)", waits)
	}
	if n := f.refunds.Load(); n != 0 {
		t.Fatalf("the refund ran %d times before any answer", n)
	}
	if grant(t, ts.URL, "ops-token", id) != http.StatusOK {
		t.Fatalf("ops could not grant approval %s", id)
	}
	out, isErr := callTool(t, cs, call.Arguments)
	if isErr || out["success"] != true {
		t.Errorf("the granted call at the same step = %v, want success", out)
	}
	if n := f.refunds.Load(); n != 1 {
		t.Errorf("the refund ran %d times, want 1", n)
	}
	if n := len(asks); n != 0 {
		t.Errorf("the client was asked %d more times, want once in all", n)
	}
}

// heldDeadline is a context whose deadline passes when expire is closed
// (Err is then [context.DeadlineExceeded]), whatever the clock says; its
// values are its parent's.
type heldDeadline struct {
	context.Context
	expire <-chan struct{}
}

func (h heldDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }
func (h heldDeadline) Done() <-chan struct{}       { return h.expire }
func (h heldDeadline) Err() error {
	select {
	case <-h.expire:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
