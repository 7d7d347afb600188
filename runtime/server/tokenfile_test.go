package server_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/server"
)

// TestTokenFileErrorsHaveLines: one meaning per document. A member given
// twice at any level is refused like every other error, with the line, and
// without naming a token.
func TestTokenFileErrorsHaveLines(t *testing.T) {
	tests := []struct {
		name, data string
		line       int
		want       string
	}{
		{"token twice", "{\"tokens\":{\n\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\"scopes\":[\"admin\"]},\n\"tok-a\":{\"principal\":\"b\",\"tenant\":\"t\"}}}", 3, "listed twice (first on line 2)"},
		{"scopes twice", "{\"tokens\":{\n\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\n\"scopes\":[\"admin\"],\n\"scopes\":[]}}}", 4, `"scopes" twice`},
		{"principal twice", "{\"tokens\":{\"tok-a\":{\"principal\":\"a\",\"principal\":\"root\",\"tenant\":\"t\"}}}", 1, `"principal" twice`},
		{"tokens twice", "{\"tokens\":{},\n\"tokens\":{\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `"tokens" twice`},
		{"syntax", "{\"tokens\":{\n\n\"tok-a\":{\"principal\":\"a\",}}}", 3, "invalid JSON"},
		{"invalid UTF-8", "{\"tokens\":{\n\"tok-\xff\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, "UTF-8"},
		{"lone surrogate", "{\"tokens\":{\"tok-a\":{\"principal\":\"\\ud800\",\"tenant\":\"t\"}}}", 1, "surrogate"},
		{"wrong type", "{\"tokens\":{\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\n\"scopes\":\"admin\"}}}", 2, "array of strings"},
		{"unknown member", "{\"tokens\":{\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\n\"role\":\"admin\"}}}", 2, `"role"`},
		{"missing tenant", "{\"tokens\":{\n\"tok-a\":{\"principal\":\"a\"}}}", 2, "needs a principal and a tenant"},
		{"trailing data", "{\"tokens\":{}}\n{}", 2, "invalid JSON"},
		{"not an object", "[]", 1, "must be an object"},
		// A token no request can present: refused on the line of its key,
		// naming the principal, never the token.
		{"empty token", "{\"tokens\":{\n\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\"},\n\"\":{\"principal\":\"b\",\"tenant\":\"t\"}}}", 3, `principal "b" has an empty token`},
		{"blank token", "{\"tokens\":{\n\n\"   \":{\"principal\":\"b\",\n\"tenant\":\"t\"}}}", 3, `principal "b" has an empty token`},
		{"escaped blank token", "{\"tokens\":{\n\"\\t\\n \":{\"principal\":\"b\",\"tenant\":\"t\"}}}", 2, `principal "b" has an empty token`},
		{"leading space", "{\"tokens\":{\n\" tok-a\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with whitespace`},
		{"trailing newline", "{\"tokens\":{\n\"tok-a\\n\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with whitespace`},
		{"space inside", "{\"tokens\":{\"tok-b\":{\"principal\":\"b\",\"tenant\":\"t\"},\n\n\"tok-a tok-c\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 3, `principal "a" has a token with whitespace`},
		{"no-break space inside", "{\"tokens\":{\n\"tok-a\u00a0x\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with whitespace`},
		{"escaped NUL", "{\"tokens\":{\n\"tok-a\\u0000\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with a control character`},
		{"DEL", "{\"tokens\":{\n\"tok-a\x7f\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with a control character`},
		{"C1 control", "{\"tokens\":{\n\"tok-a\u0085x\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with`},
		{"escape sequence", "{\"tokens\":{\n\"tok-a\\u001b[2J\":{\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has a token with a control character`},
		// A scope no token can carry, and a file nobody can use.
		{"empty scope", "{\"tokens\":{\n\"tok-a\":{\"scopes\":[\"x\",\"\"],\n\"principal\":\"a\",\"tenant\":\"t\"}}}", 2, `principal "a" has an empty scope`},
		{"scope with a space", "{\"tokens\":{\n\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\n\"scopes\":[\"a b\"]}}}", 3, `principal "a" has a scope with whitespace`},
		{"blank scope", "{\"tokens\":{\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\"scopes\":[\" \"]}}}", 1, `principal "a" has an empty scope`},
		{"scope with a control character", "{\"tokens\":{\"tok-a\":{\"principal\":\"a\",\"tenant\":\"t\",\"scopes\":[\"a\\u0000\"]}}}", 1, `principal "a" has a scope with a control character`},
		{"no token", "{\n\"tokens\":{}}", 2, `"tokens" lists no token`},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "tokens.json")
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := server.LoadTokenFile(path)
			want := path + ":" + strconv.Itoa(tc.line) + ": "
			if !errors.Is(err, server.ErrTokenFile) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadTokenFile = %v; want ErrTokenFile with %q and %q", err, want, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "tok-") {
				t.Errorf("the error %q reveals a token", err)
			}
		})
	}
}

// FuzzParseTokenFile: any bytes give a token file or an ErrTokenFile with
// a line, never a panic; an accepted file has one meaning (it parses
// strictly: no member twice, valid UTF-8), lists a token, and every token
// it holds is one a request can present (not blank, no whitespace, no
// control character).
func FuzzParseTokenFile(f *testing.F) {
	f.Add([]byte(tokenFileJSON))
	f.Add([]byte(`{"tokens":{"a":{"principal":"p","tenant":"t"},"a":{"principal":"q","tenant":"t"}}}`))
	f.Add([]byte(`{"tokens":{"a":{"principal":"p","tenant":"t","scopes":["x"],"scopes":[]}}}`))
	f.Add([]byte(`{"tokens":{" ":{"principal":"p","tenant":"t"}}}`))
	f.Add([]byte(`{"tokens":{"a b":{"principal":"p","tenant":"t"}}}`))
	f.Add([]byte(`{"tokens":{"a\u0000":{"principal":"p","tenant":"t"}}}`))
	f.Add([]byte("{\"tokens\":{\"a\u2028\":{\"principal\":\"p\",\"tenant\":\"t\"}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := server.ParseTokenFile(data)
		if err != nil {
			if !errors.Is(err, server.ErrTokenFile) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("ParseTokenFile error %v: want ErrTokenFile with a line", err)
			}
			return
		}
		if _, err := jcs.Parse(data); err != nil || tf == nil {
			t.Fatalf("ParseTokenFile accepted %q, which does not parse strictly: %v", data, err)
		}
		var file struct {
			Tokens map[string]json.RawMessage `json:"tokens"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatalf("ParseTokenFile accepted %q, which encoding/json refuses: %v", data, err)
		}
		if tf.Len() == 0 {
			t.Fatalf("ParseTokenFile accepted %q, which lists no token", data)
		}
		if len(file.Tokens) != tf.Len() {
			t.Fatalf("ParseTokenFile(%q) holds %d tokens, the file lists %d", data, tf.Len(), len(file.Tokens))
		}
		for bearer := range file.Tokens {
			if strings.TrimSpace(bearer) == "" || strings.IndexFunc(bearer, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				t.Fatalf("ParseTokenFile accepted the token %q, which no request can present", bearer)
			}
		}
	})
}
