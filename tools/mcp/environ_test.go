package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// environServerEnv makes the test binary, run by [TestStdioEnvironment], a
// stdio MCP server whose tool "environ" returns the environment it was
// started with, and whose tool "pid" its process id.
const environServerEnv = "TOOLGATE_TEST_ENVIRON_SERVER"

// serveEnviron runs the server of environServerEnv on stdin and stdout.
func serveEnviron() error {
	srv := sdk.NewServer(&sdk.Implementation{Name: "environ", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{
		Name:        "environ",
		Description: "Return the server's environment. Used by tests.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{StructuredContent: map[string][]string{"environ": os.Environ()}}, nil
	})
	srv.AddTool(&sdk.Tool{
		Name:        "pid",
		Description: "Return the server's process id. Used by tests.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{StructuredContent: map[string]int{"pid": os.Getpid()}}, nil
	})
	return srv.Run(context.Background(), &sdk.StdioTransport{})
}

// TestStdioEnvironment: a stdio server is started with a default
// environment (PATH, HOME and the like), the variables its Env sets and
// those its PassEnv names, never the rest of toolgate's environment: a
// model API key or a store's password there is not the server's to read.
// The TypeScript SDK's client does the same.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-parent-secret")
	t.Setenv("TOOLGATE_TEST_STORE_URL", "postgres://u:hunter2@db/toolgate")
	t.Setenv("TOOLGATE_TEST_PASSED", "passed-through")
	t.Setenv("TOOLGATE_TEST_OVERRIDDEN", "from the parent")
	t.Setenv("HOME", "/home/toolgate-test")
	t.Setenv("TERM", "() { :; }; echo shell function")
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	var logs testenv.Buffer
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "environ", Command: []string{exe},
		Env: map[string]string{environServerEnv: "1", "TOOLGATE_TEST_CONFIGURED": "configured",
			"TOOLGATE_TEST_OVERRIDDEN": "env wins"},
		PassEnv: []string{"TOOLGATE_TEST_PASSED", "TOOLGATE_TEST_OVERRIDDEN", "TOOLGATE_TEST_UNSET"}},
		&mcp.Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatalf("Connect = %v", err)
	}
	defer up.Close()
	raw, err := call(t, ctx, reg, "environ/environ", map[string]any{})
	if err != nil {
		t.Fatalf("environ: %v", err)
	}
	var res struct{ Environ []string }
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("environ result %s: %v", raw, err)
	}
	got := map[string]string{}
	for _, kv := range res.Environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("the server's environment sets %s twice", k)
		}
		got[k] = v
	}
	if !strings.Contains(logs.String(), `"variable":"TOOLGATE_TEST_UNSET"`) {
		t.Errorf("the unset TOOLGATE_TEST_UNSET of PassEnv was not logged:\n%s", logs.String())
	}
	for _, tc := range []struct {
		name, variable string
		want           string // "" for absent
	}{
		{"a model key is not passed", "OPENAI_API_KEY", ""},
		{"a store URL is not passed", "TOOLGATE_TEST_STORE_URL", ""},
		{"PATH is passed", "PATH", os.Getenv("PATH")},
		{"HOME is passed", "HOME", "/home/toolgate-test"},
		{"a shell function is not passed", "TERM", ""},
		{"Env is set", "TOOLGATE_TEST_CONFIGURED", "configured"},
		{"PassEnv passes a variable", "TOOLGATE_TEST_PASSED", "passed-through"},
		{"Env wins over PassEnv", "TOOLGATE_TEST_OVERRIDDEN", "env wins"},
		{"PassEnv of an unset variable sets nothing", "TOOLGATE_TEST_UNSET", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := got[tc.variable]
			switch {
			case tc.want == "" && ok:
				t.Errorf("the server's %s = %q, want it absent", tc.variable, v)
			case tc.want != "" && v != tc.want:
				t.Errorf("the server's %s = %q (set %v), want %q", tc.variable, v, ok, tc.want)
			}
		})
	}
}
