package mcpserver

import (
	"bytes"
	"strings"
	"testing"
)

// TestCleanSDKError: only an error of code 0 or of the SDK's decoder is
// rewritten; a result that carries such words, and an error of another
// code, pass as they are.
func TestCleanSDKError(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		want        string // "" when the frame passes as it is
	}{
		{"code 0", `{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"duplicate \"initialize\" received"}}` + "\n",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"duplicate \"initialize\" received"}}` + "\n"},
		{"code 0, no newline", `{"jsonrpc":"2.0","id":"a","error":{"code":0,"message":"m"}}`,
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"m"}}`},
		{"another code", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"unmarshaling \"x\""}}`, ""},
		{"a result holding code 0", `{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"code":0,"ok":true}}}`, ""},
		{"a result holding the word", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"unmarshaling"}]}}`, ""},
		{"decoder error", `{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"handling 'tools/call': unmarshaling \"7\" into Go struct field mcp.CallToolParamsRaw.name of type string"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params of \"tools/call\": name must be a string"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cleanSDKError([]byte(tc.frame))
			if tc.want == "" {
				if ok {
					t.Errorf("cleanSDKError(%s) = %s, want it left as it is", tc.frame, got)
				}
				return
			}
			if !ok || string(got) != tc.want {
				t.Errorf("cleanSDKError(%s) = %s, %v; want %s", tc.frame, got, ok, tc.want)
			}
		})
	}
}

// BenchmarkMayNeedCleaning: the scan every outgoing message gets, on a
// tools/list answer of about 16 KiB.
func BenchmarkMayNeedCleaning(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for buf.Len() < 16<<10 {
		buf.WriteString(`{"name":"create_issue","description":"` + strings.Repeat("Create an issue in a repository. ", 8) + `","inputSchema":{"type":"object","properties":{"title":{"type":"string"}}}},`)
	}
	buf.WriteString(`{}]}}`)
	frame := buf.Bytes()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if mayNeedCleaning(frame) {
			b.Fatal("a clean frame needs cleaning")
		}
	}
}
