package finance_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/tools/lint"
)

// TestLintReportsStuffer: lint names each stuffer with the kind of its
// stuffing, names the victim where the card names it, and flags none of
// the real catalogs' tools with these kinds.
func TestLintReportsStuffer(t *testing.T) {
	poisoning := []lint.Kind{lint.NamesOtherTool, lint.RepeatedText, lint.AliasFlood, lint.LongText}
	for _, tc := range []struct {
		stuffer string
		want    []lint.Kind
	}{
		{"repetition", []lint.Kind{lint.RepeatedText, lint.LongText}},
		{"alias flood", []lint.Kind{lint.RepeatedText, lint.AliasFlood}},
		{"names the victim", []lint.Kind{lint.NamesOtherTool, lint.RepeatedText}},
		{"everything", poisoning},
	} {
		t.Run(tc.stuffer, func(t *testing.T) {
			i := slices.IndexFunc(stuffers, func(s struct{ name, tool, control string }) bool { return s.name == tc.stuffer })
			fs, err := lint.Check(context.Background(), poisonedSnapshot(t, stuffers[i].tool), &lint.Options{Skip: []lint.Kind{lint.Unfindable}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[lint.Kind][]lint.Finding{}
			for _, f := range fs {
				if f.Tool == "notes/account_assistant" {
					got[f.Kind] = append(got[f.Kind], f)
				} else if slices.Contains(poisoning, f.Kind) {
					t.Errorf("lint flags %s, a tool of the real catalogs: %s", f.Tool, f)
				}
			}
			for i, k := range poisoning {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					if want := slices.Contains(tc.want, k); (len(got[k]) > 0) != want {
						t.Errorf("lint(%s stuffer): %s finding %v, want %v; got %v", tc.stuffer, k, len(got[k]) > 0, want, got)
					}
				})
			}
			for _, f := range got[lint.NamesOtherTool] {
				if f.Other != finance.TransferFunds {
					t.Errorf("lint(%s stuffer): %s names %q, want %s", tc.stuffer, lint.NamesOtherTool, f.Other, finance.TransferFunds)
				}
			}
		})
	}
}
