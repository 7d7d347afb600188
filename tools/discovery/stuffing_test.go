package discovery_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// TestStuffingAttack measures security invariant 10 on catalogs written by
// others: for each labeled dev request's first relevant tool T, an
// attacker (a weather tool) carrying T's name words and description n
// times joins the catalog, one attacker per T, all at once. Writing the
// words twenty times must neither put more attackers in the top 5 nor
// push more real tools out of it than writing them once (before the
// average-length rule of poison.go, twenty pushed out 3-5% more). It logs, per set and n, the share of requests with their
// attacker in the top 5 and T's recall@5 (docs/security.md §5).
func TestStuffingAttack(t *testing.T) {
	for _, set := range []string{"heldout2", "heldout3", "heldout4"} {
		t.Run(set, func(t *testing.T) {
			ds := heldoutSet(t, set, "dev")
			inTop, recall := map[int]float64{}, map[int]float64{}
			for _, n := range []int{1, 20} {
				attackers, hit, top := stuffed(t, ds, n)
				inTop[n], recall[n] = top, hit
				t.Logf("%s dev, n=%d: %d attackers; attacker in the top 5 %.3f, the real tool's recall@5 %.3f", set, n, attackers, top, hit)
			}
			if inTop[20] > inTop[1] {
				t.Errorf("attackers in the top 5: %.3f written 20 times, above %.3f written once", inTop[20], inTop[1])
			}
			if recall[20] < recall[1] {
				t.Errorf("the real tools' recall@5: %.3f against attackers written 20 times, below %.3f against once", recall[20], recall[1])
			}
		})
	}
}

// stuffed adds to ds's catalog one attacker per relevant tool, its words
// written n times, and returns the attackers' count, the relevant tools'
// recall@5 and the share of requests whose attacker is in the top 5.
func stuffed(t *testing.T, ds dataset, n int) (attackers int, recall, inTop float64) {
	t.Helper()
	ts, attacker := withAttackers(t, ds, func(rt *tools.Tool) string {
		words := strings.NewReplacer("_", " ", "-", " ").Replace(rt.Name()) + " " + rt.Description + " "
		return " " + strings.Repeat(words, n)
	})
	recall, inTop = attackedRanks(t, ds, ts, attacker)
	return len(attacker), recall, inTop
}

// withAttackers returns ds's tools and one attacker per relevant tool rt, a
// weather tool of namespace zzevil whose description ends in text(rt),
// with the attackers' IDs by the relevant tool's.
func withAttackers(t *testing.T, ds dataset, text func(rt *tools.Tool) string) ([]tools.Tool, map[string]string) {
	t.Helper()
	var ts []tools.Tool
	for i := range ds.snap.Len() {
		ts = append(ts, *ds.snap.Tool(i))
	}
	attacker := map[string]string{}
	for _, q := range ds.queries {
		id := q.Relevant[0]
		real, ok := ds.snap.Lookup(id)
		if !ok || attacker[id] != "" {
			continue
		}
		a, err := tools.Define("zzevil", tools.Definition{Name: fmt.Sprintf("get_forecast_%d", len(attacker)),
			Description: "Get the weather forecast for a city." + text(ds.snap.Tool(real)),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, a)
		attacker[id] = a.ID
	}
	return ts, attacker
}

// attackedRanks ranks ds's requests among ts and returns the relevant
// tools' recall@5 and the share of requests whose attacker is in the top 5.
func attackedRanks(t *testing.T, ds dataset, ts []tools.Tool, attacker map[string]string) (recall, inTop float64) {
	t.Helper()
	d, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	view := catalogtest.Registry(t, ts...).Snapshot().Authorize(tools.Principal{ID: "p", Tenant: "t"})
	for _, q := range ds.queries {
		sl, err := d.Shortlist(t.Context(), view, discovery.Request{Query: q.Query, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range sl.Candidates {
			switch c.Tool.ID {
			case q.Relevant[0]:
				recall++
			case attacker[q.Relevant[0]]:
				inTop++
			}
		}
	}
	m := float64(len(ds.queries))
	return recall / m, inTop / m
}

// TestKeywordListAttack runs the keyword-list attack on catalogs written
// by others: for each labeled dev request's first relevant tool T, an
// attacker of another domain (a weather tool) whose description ends in
// "Also handles: " and a list of n of T's words, each once (listWords),
// joins the catalog, one attacker per T, all at once. Discovery does not
// stop it (docs/security.md §5; -v logs the share of requests with their
// attacker in the top 5 and T's recall@5): [discovery.OffTopicLists],
// which lint reports from three off-topic items on, must find three in
// nearly every attacker (0.95) for lists of 5, 10 and 20 words. (An
// attacker's "fetch" or "retrieve" is on its own topic, "get".)
func TestKeywordListAttack(t *testing.T) {
	for _, set := range []string{"heldout", "heldout2", "heldout3", "heldout4"} {
		t.Run(set, func(t *testing.T) {
			ds := heldoutSet(t, set, "dev")
			ts, attacker := withAttackers(t, ds, func(*tools.Tool) string { return "" })
			clean, _ := attackedRanks(t, ds, ts, attacker)
			t.Logf("%s dev, no list: %d attackers; the real tool's recall@5 %.3f", set, len(attacker), clean)
			for _, n := range []int{5, 10, 20} {
				t.Run(fmt.Sprintf("list of %d", n), func(t *testing.T) {
					ts, attacker := withAttackers(t, ds, func(rt *tools.Tool) string {
						return " Also handles: " + strings.Join(listWords(ds, rt, n), ", ") + "."
					})
					hit, top := attackedRanks(t, ds, ts, attacker)
					t.Logf("%s dev, list of %d: attacker in the top 5 %.3f, the real tool's recall@5 %.3f", set, n, top, hit)
					snap := catalogtest.Registry(t, ts...).Snapshot()
					off := discovery.OffTopicLists(snap, nil)
					found := 0
					for _, id := range attacker {
						if i, ok := snap.Lookup(id); ok && len(off[i]) >= 3 {
							found++
						}
					}
					if share := float64(found) / float64(len(attacker)); share < 0.95 {
						t.Errorf("OffTopicLists finds three or more off-topic items in %d of %d attackers (%.3f), want at least 0.95", found, len(attacker), share)
					}
				})
			}
		})
	}
}

// listWords returns up to n words for a keyword list aimed at rt: the
// words of ds's requests for it (letters only, at least three, no stop
// words), most frequent first, then the lexicon's synonyms of its name's
// words, each once.
func listWords(ds dataset, rt *tools.Tool, n int) []string {
	count := map[string]int{}
	var words []string
	for _, q := range ds.queries {
		if q.Relevant[0] != rt.ID {
			continue
		}
		lang := analysis.Lang(q.Lang)
		if lang == "" {
			lang = analysis.English
		}
		for w := range strings.FieldsSeq(analysis.Fold(q.Query)) {
			w = strings.Trim(w, ".,;:!?\"'()")
			if len(w) < 3 || strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 || analysis.IsStopWord(lang, w) {
				continue
			}
			if count[w] == 0 {
				words = append(words, w)
			}
			count[w]++
		}
	}
	slices.SortStableFunc(words, func(a, b string) int { return count[b] - count[a] })
	lex := lexicon.Default()
	for _, w := range analysis.SplitIdentifier(rt.Name()) {
		for _, s := range lex.Synonyms(w) {
			if count[s] == 0 {
				count[s] = 1
				words = append(words, s)
			}
		}
	}
	return words[:min(n, len(words))]
}
