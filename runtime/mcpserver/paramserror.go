package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK answers params it cannot decode with the decoder's words, which
// name Go types ("handling 'tools/call': invalid params: unmarshaling
// \"...\" into a *mcp.CallToolParamsRaw: json: cannot unmarshal ... into Go
// struct field mcp.CallToolParamsRaw.name of type string"), and, for an
// initialize, with code 0. paramsError matches such a message; goField
// its member and Go type.
var (
	paramsError = regexp.MustCompile(`^handling '([^']*)': (?:invalid params: )?unmarshaling "`)
	goField     = regexp.MustCompile(`into Go struct field [A-Za-z0-9_]+\.[A-Za-z0-9_]+\.(\S+) of type (\S+)$`)
)

// The SDK also answers a request that the session's state does not allow
// (tools/list before initialize, a second initialize) with code 0, which
// JSON-RPC does not define; its message is the client's to read.
var codeZero = []byte(`"code":0,`)

// mayNeedCleaning reports whether frame may hold an error that
// cleanSDKError rewrites: a fast scan of every outgoing message, which
// decodes only those that hold one of the two marks.
func mayNeedCleaning(frame []byte) bool {
	return bytes.Contains(frame, []byte("unmarshaling")) || bytes.Contains(frame, codeZero)
}

// cleanSDKError returns frame, one JSON-RPC message, with such an error
// replaced: a decoding error by a -32602 "invalid params" error in a
// client's words (the method, and the member and the JSON type it must
// have when the decoder named them), an error of code 0 by the same
// message with -32600, "invalid request". ok is false when frame holds
// neither.
func cleanSDKError(frame []byte) (clean []byte, ok bool) {
	if !mayNeedCleaning(frame) {
		return nil, false
	}
	var resp struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(frame, &resp) != nil || resp.Error == nil {
		return nil, false
	}
	m := paramsError.FindStringSubmatch(resp.Error.Message)
	if m == nil {
		if resp.Error.Code == nil || *resp.Error.Code != 0 {
			return nil, false
		}
		return keepNewline(frame, errorFrame(validID(resp.ID), jsonrpc.CodeInvalidRequest, resp.Error.Message)), true
	}
	msg := fmt.Sprintf("invalid params of %q: not what MCP defines for it", m[1])
	if f := goField.FindStringSubmatch(resp.Error.Message); f != nil {
		msg = fmt.Sprintf("invalid params of %q: %s must be %s", m[1], f[1], jsonKind(f[2]))
	}
	return keepNewline(frame, errorFrame(validID(resp.ID), jsonrpc.CodeInvalidParams, msg)), true
}

// keepNewline returns out, which ends in a newline, ending as frame does.
func keepNewline(frame, out []byte) []byte {
	if !bytes.HasSuffix(frame, []byte("\n")) {
		out = bytes.TrimSuffix(out, []byte("\n"))
	}
	return out
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	default:
		return "an object"
	}
}

// cleanWrites rewrites each message the SDK writes (a whole JSON body, or
// one server-sent event) whose error is one that [cleanSDKError] rewrites.
type cleanWrites struct {
	heldWriter
}

var dataLine = []byte("data: ")

func (c *cleanWrites) Write(b []byte) (int, error) {
	if !mayNeedCleaning(b) {
		return c.heldWriter.ResponseWriter.Write(b)
	}
	out := b
	if i := bytes.Index(b, dataLine); i >= 0 && bytes.HasSuffix(b, []byte("\n\n")) { // an event
		data := b[i+len(dataLine) : len(b)-2]
		if clean, ok := cleanSDKError(data); ok {
			out = append(append(append(append([]byte{}, b[:i]...), dataLine...), clean...), "\n\n"...)
		}
	} else if clean, ok := cleanSDKError(b); ok {
		out = clean
	}
	if _, err := c.heldWriter.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
