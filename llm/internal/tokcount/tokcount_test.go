package tokcount

import (
	"testing"

	"github.com/toolgate/toolgate/internal/tokens"
)

func TestCountMatchesTokens(t *testing.T) {
	for _, s := range []string{"", "hello world", `{"type":"object"}`, `{"name":"get_balance","parameters":{"type":"object"}}`} {
		t.Run(s, func(t *testing.T) {
			want, err := tokens.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // uncached, then cached
				if got := Count(s); got != want {
					t.Errorf("Count(%q) = %d, want %d", s, got, want)
				}
			}
		})
	}
}
