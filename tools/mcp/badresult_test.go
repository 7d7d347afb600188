package mcp_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// badResultServerEnv makes the test binary, run by
// [TestUndecodableResultRan], a stdio MCP server written by hand that
// lists resultListing and answers every tools/call with the result the
// variable holds.
const badResultServerEnv = "TOOLGATE_TEST_BAD_RESULT_SERVER"

// resultListing is the listing of the servers of [TestUndecodableResultRan].
const resultListing = `{"tools":[{"name":"act","inputSchema":{"type":"object"}}]}`

// badFrameEnv makes the server of [badResultServerEnv] answer every
// tools/call with the line the variable holds instead, "$ID" in it
// replaced by the request's id.
const badFrameEnv = "TOOLGATE_TEST_BAD_FRAME"

// serveBadResult is the server of [badResultServerEnv].
func serveBadResult() error {
	result := os.Getenv(badResultServerEnv)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req rpcRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		switch frame := os.Getenv(badFrameEnv); {
		case len(req.ID) == 0:
		case req.Method == "tools/call" && frame != "":
			fmt.Println(strings.ReplaceAll(frame, "$ID", string(req.ID)))
		default:
			fmt.Println(req.answer(resultListing, result))
		}
	}
	return in.Err()
}

// TestErrorsTheServerDidNotSend: a call fails as "no effect" (nothing
// ran: the claim is released and a retry runs afresh) only on a JSON-RPC
// error the server answered it with. An error the client makes up is an
// unknown outcome: a frame from the server it cannot read (an id that is
// true, or null on a response), which ends the connection after the
// server may have run the tool; an HTTP 500, 502, 503 or 504 (a proxy's
// timeout while the server runs the tool), which the SDK reports as a
// JSON-RPC error of its own without reading the body. Before,
// all of these were "no effect", and a retry ran the tool again as if it
// never had.
func TestErrorsTheServerDidNotSend(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stdio := func(frame string) mcp.Server {
		return mcp.Server{Name: "odd", Command: []string{exe}, Env: map[string]string{badResultServerEnv: `{"content":[]}`, badFrameEnv: frame}}
	}
	const refusal = `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}`
	tests := []struct {
		name     string
		cfg      mcp.Server
		noEffect bool
	}{
		{"stdio: an error answer", stdio(fmt.Sprintf(refusal, "$ID")), true},
		{"stdio: an id that is true", stdio(`{"jsonrpc":"2.0","id":true,"result":{}}`), false},
		{"stdio: a response whose id is null", stdio(`{"jsonrpc":"2.0","id":null,"result":{}}`), false},
		{"HTTP: 504 without a body", mcp.Server{Name: "odd", URL: statusServer(t, false, resultListing, "", http.StatusGatewayTimeout, "")}, false},
		{"HTTP: 500 without a body", mcp.Server{Name: "odd", URL: statusServer(t, false, resultListing, "", http.StatusInternalServerError, "")}, false},
		{"HTTP: 400 with an error answer", mcp.Server{Name: "odd", URL: statusServer(t, false, resultListing, "", http.StatusBadRequest, fmt.Sprintf(refusal, "$ID"))}, true},
		// The SDK reads no body of a status it takes for transient.
		{"HTTP: 500 with an error answer", mcp.Server{Name: "odd", URL: statusServer(t, false, resultListing, "", http.StatusInternalServerError, fmt.Sprintf(refusal, "$ID"))}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			reg := tools.NewRegistry()
			connect(t, ctx, reg, tc.cfg)
			got, err := call(t, ctx, reg, "odd/act", map[string]any{})
			if err == nil {
				t.Fatalf("call = %s, nil; want an error", got)
			}
			if tools.IsNoEffect(err) != tc.noEffect {
				t.Errorf("call = %v: IsNoEffect = %v, want %v", err, tools.IsNoEffect(err), tc.noEffect)
			}
		})
	}
}

// TestUndecodableResultRan: a server that answers a tools/call with a
// result that is no valid MCP CallToolResult (content not an array, a
// content block of an unknown type, a number) has run the tool: it
// answered. The call is a domain error with code [mcp.CodeInvalidOutput]
// that says what is wrong in MCP's terms, so the gateway records it and a
// retry gets it again; before, the SDK's decoding error made the outcome
// unknown and every retry ran the tool again under the default policy.
func TestUndecodableResultRan(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	results := []struct {
		name, result, says string
	}{
		{"content not an array", `{"content":"three"}`, "content: a JSON string, where MCP wants an array"},
		{"unknown content type", `{"content":[{"type":"bogus","text":"three"}]}`, `unrecognized content type "bogus"`},
		{"not an object", `42`, "a JSON number, where MCP wants an object"},
		{"isError not a boolean", `{"content":[],"isError":"yes"}`, "isError: a JSON string, where MCP wants true or false"},
	}
	for _, tc := range results {
		transports := []struct {
			name string
			cfg  mcp.Server
		}{
			{"stdio", mcp.Server{Name: "odd", Command: []string{exe}, Env: map[string]string{badResultServerEnv: tc.result}}},
			{"streamable HTTP", mcp.Server{Name: "odd", URL: wireServer(t, false, resultListing, tc.result)}},
			{"streamable HTTP events", mcp.Server{Name: "odd", URL: wireServer(t, true, resultListing, tc.result)}},
		}
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				ctx := testContext(t)
				reg := tools.NewRegistry()
				up := connect(t, ctx, reg, tr.cfg)
				got, err := call(t, ctx, reg, "odd/act", map[string]any{})
				var de *tools.DomainError
				if !errors.As(err, &de) || de.Code != mcp.CodeInvalidOutput {
					t.Fatalf("call of a tool whose result is no valid MCP = %s, %v; want a domain error %s", got, err, mcp.CodeInvalidOutput)
				}
				want := "mcp: odd/act ran, but its result is no valid MCP tool result (" + tc.says + "), so it is not passed on"
				if de.Message != want {
					t.Errorf("message = %q, want %q", de.Message, want)
				}
				if strings.Contains(de.Message, "Go ") || strings.Contains(de.Message, "three") {
					t.Errorf("message %q names the decoder's Go types or quotes the result", de.Message)
				}
				if !up.Status().Connected {
					t.Error("the upstream is no longer connected after answering a result it could not decode")
				}
			})
		}
	}
}
