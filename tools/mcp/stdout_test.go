package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// bannerServerEnv makes the test binary, run by [TestStdoutBannerSkipped],
// a stdio MCP server that prints lines that are not JSON on its stdout
// before and between its messages (mcp-server-code-runner 0.1.8 prints
// "Code Runner MCP Server running on stdio" there).
const bannerServerEnv = "TOOLGATE_TEST_BANNER_SERVER"

// testServers are the servers the test binary becomes when the
// environment names one (see each variable): the first whose variable is
// set serves stdio and exits 0, or 1 with its error on stderr.
var testServers = []struct {
	env   string
	serve func() error
}{
	{bannerServerEnv, serveBanner},
	{badToolServerEnv, serveBadTool},
	{outputServerEnv, func() error { return outputServer().Run(context.Background(), &sdk.StdioTransport{}) }},
	{environServerEnv, serveEnviron},
	{badResultServerEnv, serveBadResult},
	{flakyServerEnv, serveFlaky},
	// Never answers: reads its stdin until the client closes it.
	{silentServerEnv, func() error { io.Copy(io.Discard, os.Stdin); return nil }},
}

func TestMain(m *testing.M) {
	for _, s := range testServers {
		if os.Getenv(s.env) == "" {
			continue
		}
		if err := s.serve(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveBanner is the server of [bannerServerEnv]: it prints a banner and a
// blank line on stdout, then serves run_code.
func serveBanner() error {
	fmt.Println("Code Runner MCP Server running on stdio")
	fmt.Println()
	srv := sdk.NewServer(&sdk.Implementation{Name: "banner", Version: "1"}, nil)
	addEcho(srv, "run_code")
	return srv.Run(context.Background(), &sdk.StdioTransport{})
}

// silentServerEnv makes the test binary, run by
// [TestConnectTimeoutBoundsASilentServer], a stdio server that starts and
// never answers, as a server stuck in its start (waiting on a database, a
// prompt on its terminal) does.
const silentServerEnv = "TOOLGATE_TEST_SILENT_SERVER"

// TestConnectTimeoutBoundsASilentServer: a server that starts but never
// answers initialize fails Connect and ListTools after
// [mcp.Options.ConnectTimeout], with an error that says so, instead of
// holding toolgate serve's start (or mcp pin) forever.
func TestConnectTimeoutBoundsASilentServer(t *testing.T) {
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.Server{Name: "silent", Command: []string{exe}, Env: map[string]string{silentServerEnv: "1"}}
	opts := &mcp.Options{Logger: quiet, ConnectTimeout: 100 * time.Millisecond}
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"Connect", func() error {
			up, err := mcp.Connect(ctx, tools.NewRegistry(), srv, opts)
			if err == nil {
				up.Close()
			}
			return err
		}},
		{"ListTools", func() error { _, err := mcp.ListTools(ctx, srv, opts); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 100ms") {
				t.Errorf("%s of a server that never answers = %v, want an error saying it gave no answer within 100ms", tc.name, err)
			}
			if ctx.Err() != nil {
				t.Fatal("the test's own deadline passed: the connection was not bounded")
			}
		})
	}
}

// TestStdoutBannerSkipped: a stdio server that writes a line that is not
// JSON on stdout (a banner) is still imported and called: the line is
// skipped and logged, as the TypeScript SDK's client does, instead of
// failing the connection with "invalid character 'C' looking for
// beginning of value".
func TestStdoutBannerSkipped(t *testing.T) {
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "runner", Command: []string{exe},
		Env: map[string]string{bannerServerEnv: "1"}}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("Connect to a server with a stdout banner = %v, want it connected", err)
	}
	defer up.Close()
	got, err := call(t, ctx, reg, "runner/run_code", map[string]any{"text": "print(1)"})
	if err != nil || !strings.Contains(string(got), `"text":"print(1)"`) {
		t.Errorf("run_code = %s, %v; want the echo", got, err)
	}
}
