package mcpserver

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/gateway"
)

func TestParseCall(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want callArgs
		ok   bool
	}{
		{`{"name":"a"}`, callArgs{Name: "a", Arguments: json.RawMessage(`{}`)}, true},
		{`{"name":"a","arguments":null,"step":7}`, callArgs{Name: "a", Arguments: json.RawMessage(`{}`), Step: 7}, true},
		{`{"name":"a","arguments":{"amount":1.0000000000000000001}}`, callArgs{Name: "a", Arguments: json.RawMessage(`{"amount":1.0000000000000000001}`)}, true},
		{`{"name":"a","step":` + strconv.Itoa(MaxStep) + `}`, callArgs{Name: "a", Arguments: json.RawMessage(`{}`), Step: MaxStep}, true},
		{`{"name":"a","step":` + strconv.Itoa(MaxStep+1) + `}`, callArgs{}, false},
		{`{"name":"a","step":01}`, callArgs{}, false},
		{`{"name":"a","step":1.0}`, callArgs{}, false},
		{`{"name":"a","step":1e0}`, callArgs{}, false},
		{`{"name":"a","step":-0}`, callArgs{}, false},
		{`{"name":"a","step":null}`, callArgs{}, false},
		{`{"name":"a","name":"b"}`, callArgs{}, false},
		{`{"name":"a","arguments":{"x":1,"x":2}}`, callArgs{}, false},
		{`{"name":"a","arguments":"{}"}`, callArgs{}, false},
		{`{"name":"a","extra":1}`, callArgs{}, false},
		{`{"name":null}`, callArgs{}, false},
		{`[]`, callArgs{}, false},
		{`null`, callArgs{}, false},
		{``, callArgs{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseCall(json.RawMessage(tc.in))
			if tc.ok {
				if err != nil || got.Name != tc.want.Name || string(got.Arguments) != string(tc.want.Arguments) || got.Step != tc.want.Step {
					t.Errorf("parseCall(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
				}
			} else if !errors.Is(err, errCallArgs) {
				t.Errorf("parseCall(%s) = %+v, %v; want an errCallArgs", tc.in, got, err)
			}
		})
	}
}

// TestParseCallNameMessage: a call with no name says name is missing; a
// name of another type (null included) says it must be a string.
func TestParseCallNameMessage(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"missing", `{}`, "name is missing"},
		{"missing beside arguments", `{"arguments":{}}`, "name is missing"},
		{"number", `{"name":1}`, "name must be a string"},
		{"null", `{"name":null}`, "name must be a string"},
		{"empty", `{"name":""}`, "name must be 1 to 256 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCall(json.RawMessage(tc.in))
			if !errors.Is(err, errCallArgs) || !strings.HasSuffix(err.Error(), ": "+tc.want) {
				t.Errorf("parseCall(%s) error %v; want one ending %q", tc.in, err, tc.want)
			}
		})
	}
}

func FuzzParseCall(f *testing.F) {
	for _, s := range []string{`{"name":"a","arguments":{"x":1},"step":3}`, `{"name":"a","step":1.5}`, `{"name":"a","name":"b"}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := parseCall(in)
		if err != nil {
			if !errors.Is(err, errCallArgs) {
				t.Fatalf("parseCall(%q) error %v is not an errCallArgs", in, err)
			}
			return
		}
		if got.Name == "" || len(got.Name) > 256 || got.Step < 0 || got.Step > MaxStep || len(got.Arguments) == 0 || got.Arguments[0] != '{' || !json.Valid(got.Arguments) {
			t.Fatalf("parseCall(%q) accepted %+v", in, got)
		}
	})
}

// TestGatewayErrorBody: a refusal reads as the HTTP contract's error body
// (docs/mcp.md): approval_id and details only when there are some, and
// retry_after in whole seconds, rounded up, when the gateway gives one.
func TestGatewayErrorBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		ge   *gateway.Error
		want string
	}{
		{"rate limited", &gateway.Error{Type: gateway.RateLimited, Message: "slow down", Retryable: true, RetryAfter: 1200 * time.Millisecond},
			`{"error_type":"RATE_LIMITED","message":"slow down","retry_after":2,"retryable":true,"step":3,"success":false}`},
		{"held", &gateway.Error{Type: gateway.ConfirmationRequired, Message: "approve it", ApprovalID: "ap-1"},
			`{"approval_id":"ap-1","error_type":"CONFIRMATION_REQUIRED","message":"approve it","retryable":false,"step":3,"success":false}`},
		{"violations", &gateway.Error{Type: gateway.ValidationError, Message: "bad", Retryable: true, Details: []gateway.Violation{{Pointer: "/a", Message: "m"}}},
			`{"details":[{"pointer":"/a","message":"m"}],"error_type":"VALIDATION_ERROR","message":"bad","retryable":true,"step":3,"success":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := gatewayError(tc.ge, 3)
			if got := res.Content[0].(*sdk.TextContent).Text; got != tc.want || !res.IsError {
				t.Errorf("gatewayError = %s (error %v), want %s", got, res.IsError, tc.want)
			}
		})
	}
}
