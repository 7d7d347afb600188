package gateway_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/gateway"
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
	}
	dir := t.TempDir()
	for _, tc := range tests {
		path := filepath.Join(dir, "tokens.json")
		if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := gateway.LoadTokenFile(path)
		want := path + ":" + strconv.Itoa(tc.line) + ": "
		if !errors.Is(err, gateway.ErrTokenFile) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LoadTokenFile = %v; want ErrTokenFile with %q and %q", tc.name, err, want, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "tok-") {
			t.Errorf("%s: the error %q reveals a token", tc.name, err)
		}
	}
}

// FuzzParseTokenFile: any bytes give a token file or an ErrTokenFile with
// a line, never a panic; an accepted file has one meaning (it parses
// strictly: no member twice, valid UTF-8).
func FuzzParseTokenFile(f *testing.F) {
	f.Add([]byte(tokenFileJSON))
	f.Add([]byte(`{"tokens":{"a":{"principal":"p","tenant":"t"},"a":{"principal":"q","tenant":"t"}}}`))
	f.Add([]byte(`{"tokens":{"a":{"principal":"p","tenant":"t","scopes":["x"],"scopes":[]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := gateway.ParseTokenFile(data)
		if err != nil {
			if !errors.Is(err, gateway.ErrTokenFile) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("ParseTokenFile error %v: want ErrTokenFile with a line", err)
			}
			return
		}
		if _, err := jcs.Parse(data); err != nil || tf == nil {
			t.Fatalf("ParseTokenFile accepted %q, which does not parse strictly: %v", data, err)
		}
	})
}
