package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/hostiletest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// A server that lists a lookalike tool name keeps its other tools; the
// lookalike is left out, logged and reported by Status, never registered.
func TestLookalikeToolNamesLeftOut(t *testing.T) {
	ctx := testContext(t)
	url := hostiletest.MCPServer(t, "tr\u0430nsfer_funds", "get_balance\u202e", "transfer_funds")
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "notes", URL: url}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if got, want := registeredIDs(reg), "notes/erase_note notes/fail_note notes/read_note notes/transfer_funds"; got != want {
		t.Errorf("registered %s, want %s", got, want)
	}
	st := up.Status()
	if st.Tools != 4 || len(st.Rejected) != 2 {
		t.Fatalf("Status = %d tools, rejected %v; want 4 and the 2 lookalikes", st.Tools, st.Rejected)
	}
	var msgs []string
	for _, err := range st.Rejected {
		msgs = append(msgs, err.Error())
	}
	slices.Sort(msgs) // in the server's listing order
	for i, want := range []string{
		`mcp: notes: tool left out: tool name "get_balance\u202e": character 12 is U+202E RIGHT-TO-LEFT OVERRIDE, not printable ASCII: it could pass for another tool's name`,
		`mcp: notes: tool left out: tool name "tr\u0430nsfer_funds": character 3 is U+0430 CYRILLIC SMALL LETTER A, not printable ASCII: it could pass for another tool's name`,
	} {
		t.Run(want, func(t *testing.T) {
			if msgs[i] != want {
				t.Errorf("Rejected[%d] = %q, want %q", i, msgs[i], want)
			}
		})
	}
}

// registeredIDs is the IDs of reg's tools, space-separated, in its order.
func registeredIDs(reg *tools.Registry) string {
	var ids []string
	for _, tl := range reg.Snapshot().Tools() {
		ids = append(ids, tl.ID)
	}
	return strings.Join(ids, " ")
}

// duplicatingServer serves echo tools over Streamable HTTP, its tools/list
// answer followed by the given extra definitions, so that a name can be
// listed twice (the SDK's server keeps one tool per name).
func duplicatingServer(t *testing.T, extra []*sdk.Tool, names ...string) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "dup", Version: "1"}, nil)
	for _, n := range names {
		addEcho(srv, n)
	}
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				lr.Tools = append(lr.Tools, extra...)
			}
			return res, err
		}
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// A server that lists one name twice with two definitions keeps its other
// tools: which definition a call by that name runs is unknown, so every
// copy is left out and the name reported once; a name listed twice alike
// is one tool.
// Before, the duplicate ID failed the whole listing, so one such tool
// kept the server from connecting (or reconnecting), also under --pins.
func TestDuplicateToolNamesLeftOut(t *testing.T) {
	ctx := testContext(t)
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
	extra := []*sdk.Tool{
		{Name: "echo_b", Description: "Echo the text to every channel.", InputSchema: schema},
		{Name: "echo_c", Description: "Echo the text back. Used by tests.", InputSchema: schema},
	}
	url := duplicatingServer(t, extra, "echo_a", "echo_b", "echo_c")

	lock := mcp.NewLock()
	if err := lock.Pin("web", append([]*sdk.Tool{{Name: "echo_a", Description: "Echo the text back. Used by tests.", InputSchema: schema}}, extra...)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts *mcp.Options
	}{
		{"unpinned", &mcp.Options{Logger: quiet}},
		{"pinned", &mcp.Options{Logger: quiet, Pins: lock}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := tools.NewRegistry()
			up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: url}, tc.opts)
			if err != nil {
				t.Fatalf("Connect to a server listing echo_b and echo_c twice = %v, want its other tools registered", err)
			}
			defer up.Close()
			if got, want := registeredIDs(reg), "web/echo_a web/echo_c"; got != want {
				t.Errorf("registered %s, want %s", got, want)
			}
			if tc.opts.Pins != nil {
				return // echo_b is quarantined as changed: its copies differ from the one pin
			}
			st := up.Status()
			want := `mcp: web: tool left out: "echo_b": the server lists the name 2 times with different definitions, so which one a call runs is unknown`
			if len(st.Rejected) != 1 || st.Rejected[0].Error() != want {
				t.Errorf("Status.Rejected = %v, want only %q", st.Rejected, want)
			}
		})
	}
}

// An override in Server.Tools for a name the server does not list (a
// typo, a tool renamed upstream) applies to nothing: Status names it, so
// a scope or an irreversible flag meant for a tool is never lost
// silently; an override of a listed tool is not named.
func TestUnknownOverridesReported(t *testing.T) {
	ctx := testContext(t)
	_, url := sdkServer(t, 0, "echo_a", "echo_b")
	yes := true
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: url, Tools: map[string]mcp.ToolOverride{
		"echo_a":  {Scopes: []string{"web:admin"}},
		"echo_bb": {Irreversible: &yes},
		"echo_c":  {Scopes: []string{"web:admin"}},
	}}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if got, want := up.Status().UnknownOverrides, []string{"echo_bb", "echo_c"}; !slices.Equal(got, want) {
		t.Errorf("Status.UnknownOverrides = %q, want %q", got, want)
	}
}
