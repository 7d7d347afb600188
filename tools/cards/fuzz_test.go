package cards_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools/cards"
)

// FuzzParse checks that any input either parses into entries that Write
// and Parse round-trip, or fails with a [*cards.Error] naming a line; never a
// panic.
func FuzzParse(f *testing.F) {
	f.Add(`{"tool":"github/create_pull_request","hash":"sha256:0123456789abcdef","aliases":["open a PR"],"examples":["open a pull request"],"not_for":"merging","tags":["pr"]}`)
	f.Add(`{"tool":"k8s/*","aliases":["k8s","the cluster"]}` + "\n# c\n\n" + `{"tool":"k8s/*","aliases":["x"]}`)
	f.Add(`{"tool":"a/b","hash":"sha256:0123456789abcdef","aliases":"x"}`)
	f.Add("{\"tool\":\"a/*\",\"tags\":[\"\\u0000\"]}")
	f.Fuzz(func(t *testing.T, src string) {
		ov, err := cards.Parse(strings.NewReader(src), "f")
		if err != nil {
			var ce *cards.Error
			if !errors.As(err, &ce) || ce.Line < 1 || ce.File != "f" {
				t.Fatalf("Parse error %v is not a *cards.Error with a line", err)
			}
			return
		}
		var entries []cards.Entry
		for _, e := range ov.Entries() {
			entries = append(entries, *e)
		}
		var buf bytes.Buffer
		if err := cards.Write(&buf, entries); err != nil {
			t.Fatal(err)
		}
		back, err := cards.Parse(&buf, "w")
		if err != nil {
			t.Fatalf("written overlay does not parse: %v\n%s", err, buf.String())
		}
		if back.Len() != ov.Len() {
			t.Fatalf("round trip: %d entries, want %d", back.Len(), ov.Len())
		}
	})
}
