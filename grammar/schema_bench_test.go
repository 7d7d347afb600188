package grammar

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"
)

// benchSchemas returns JSONSchemaBench schemas, optionally only the
// tool-call subsets.
func benchSchemas(tb testing.TB, toolsOnly bool) [][]byte {
	t, ok := tb.(*testing.T)
	var groups map[string][]suiteGroup
	if ok {
		groups = maskBenchGroups(t)
	} else {
		groups = maskBenchGroups(&testing.T{})
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		if toolsOnly && !toolSubset(n) {
			continue
		}
		for _, g := range groups[n] {
			out = append(out, g.schema)
		}
	}
	return out
}

// BenchmarkFromSchema compiles every JSONSchemaBench schema once per
// iteration, bypassing the cache (ns/op divided by the schema count is the
// mean per schema).
func BenchmarkFromSchema(b *testing.B) {
	for _, set := range []struct {
		name      string
		toolsOnly bool
	}{{"all", false}, {"tools", true}} {
		schemas := benchSchemas(b, set.toolsOnly)
		docs := make([]*jsonValue, len(schemas))
		for i, s := range schemas {
			docs[i], _ = decodeJSON(s)
		}
		b.Run(fmt.Sprintf("%s-%d-schemas", set.name, len(docs)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for _, d := range docs {
					compileUncached(d, Options{})
				}
			}
		})
	}
}

// BenchmarkEnvelope compiles the turn envelope of five typical tools:
// cold (no cache: every schema compiled) and with a Cache holding the
// shortlist (a repeated turn), and one schema through the cache.
func BenchmarkEnvelope(b *testing.B) {
	ts := financeTools(b)
	gh, _ := os.ReadFile("testdata/schema/github_create_issue.json")
	ts = append(ts, EnvelopeTool{Name: "create_issue", Schema: gh})
	for _, c := range []struct {
		name string
		opts *Options
	}{{"5-tools-cold", nil}, {"5-tools-cached", &Options{Cache: NewCache(0)}}} {
		b.Run(c.name, func(b *testing.B) {
			if c.opts != nil {
				Envelope(ts, c.opts) // fills the cache
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Envelope(ts, c.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("schema-cached", func(b *testing.B) {
		opts := &Options{Cache: NewCache(0)}
		FromSchema(gh, opts)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			FromSchema(gh, opts)
		}
	})
}

// TestCompileLatency prints the per-schema compile-time distribution over
// JSONSchemaBench (TOOLGATE_COMPILE_LATENCY=1; timing is reported, never
// asserted).
func TestCompileLatency(t *testing.T) {
	if os.Getenv("TOOLGATE_COMPILE_LATENCY") != "1" {
		t.Skip("set TOOLGATE_COMPILE_LATENCY=1 to print the compile-time distribution")
	}
	for _, set := range []struct {
		name      string
		toolsOnly bool
	}{{"all JSONSchemaBench", false}, {"tool-call subsets", true}} {
		schemas := benchSchemas(t, set.toolsOnly)
		var ds []time.Duration
		for _, s := range schemas {
			doc, err := decodeJSON(s)
			if err != nil {
				continue
			}
			best := time.Duration(1 << 62)
			for r := 0; r < 3; r++ { // best of 3 damps a shared machine's noise
				t0 := time.Now()
				compileUncached(doc, Options{})
				if d := time.Since(t0); d < best {
					best = d
				}
			}
			ds = append(ds, best)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		q := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
		out, _ := json.Marshal(map[string]any{"set": set.name, "schemas": len(ds), "p50_us": q(0.5).Microseconds(),
			"p90_us": q(0.9).Microseconds(), "p99_us": q(0.99).Microseconds(), "max_us": ds[len(ds)-1].Microseconds()})
		t.Logf("%s", out)
	}
}
