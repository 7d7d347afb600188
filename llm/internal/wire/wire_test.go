package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm"
)

func TestToolSchema(t *testing.T) {
	spec := llm.ToolSpec{Name: "get_balance", Parameters: json.RawMessage(`{ "type": "object" }`), StrictParameters: json.RawMessage(`{"type":"object", "additionalProperties":false}`)}
	tests := []struct {
		spec   llm.ToolSpec
		strict bool
		want   string // "" means an ErrInvalidRequest error
	}{
		{spec, false, `{"type":"object"}`},
		{spec, true, `{"type":"object","additionalProperties":false}`},
		{llm.ToolSpec{Name: "t", Parameters: spec.Parameters}, true, ""},
		{llm.ToolSpec{Name: "t", Parameters: json.RawMessage(`{"type":`)}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got, err := ToolSchema(tt.spec, tt.strict)
			if tt.want == "" {
				if !errors.Is(err, llm.ErrInvalidRequest) {
					t.Errorf("ToolSchema(%s, %v) error = %v, want ErrInvalidRequest", tt.spec.Parameters, tt.strict, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("ToolSchema(%s, %v) = %s, %v, want %s", tt.spec.Parameters, tt.strict, got, err, tt.want)
			}
		})
	}
}

func TestCheckBaseURL(t *testing.T) {
	for url, ok := range map[string]bool{"": true, "http://localhost:8080/v1": true, "https://api.example.com": true, "localhost:8080": false, "ftp://x": false} {
		t.Run(url, func(t *testing.T) {
			if err := CheckBaseURL("openai", url); (err == nil) != ok {
				t.Errorf("CheckBaseURL(%q) = %v, want ok %v", url, err, ok)
			}
		})
	}
}

func TestServerMessage(t *testing.T) {
	long := strings.Repeat("é", MaxMessageBytes)
	for _, tc := range []struct{ name, in, want string }{
		{"plain", " The server is overloaded. ", "The server is overloaded."},
		{"escape sequence", "bad\x1b[2Jthing\nnext", `bad\u001b[2Jthing\nnext`},
		{"long", long, long[:MaxMessageBytes] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServerMessage(tc.in); got != tc.want {
				t.Errorf("ServerMessage(%.40q) = %.60q, want %.60q", tc.in, got, tc.want)
			}
		})
	}
}
