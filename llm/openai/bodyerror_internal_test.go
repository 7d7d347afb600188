package openai

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/llm/internal/wire"
)

// FuzzBodyError: whatever a server sends with HTTP 200, bodyError does not
// panic, and an error it reads has an HTTP error status and a message that
// is bounded, valid UTF-8 and on one line.
func FuzzBodyError(f *testing.F) {
	for _, s := range bodyErrorSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		se := bodyError(raw)
		if se == nil {
			return
		}
		if se.StatusCode < 400 || se.StatusCode > 599 {
			t.Errorf("bodyError(%q).StatusCode = %d, want an HTTP error status", raw, se.StatusCode)
		}
		if len(se.Message) > wire.MaxMessageBytes+len("…") || !utf8.ValidString(se.Message) || strings.ContainsAny(se.Message, "\n\r\x1b") {
			t.Errorf("bodyError(%q).Message = %q, want one bounded, escaped line", raw, se.Message)
		}
	})
}

// bodyErrorSeeds are errors as servers send them with HTTP 200, and near misses.
var bodyErrorSeeds = []string{
	`{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`,
	`{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}`,
	`{"error":{"message":"Provider returned error","code":"502"}}`,
	`{"error":null}`, `{"error":"text"}`, `{"object":"error"}`, `[]`, ``,
}
