package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/cputime"
	"github.com/toolgate/toolgate/internal/testenv"
)

// syntheticCatalog grows a catalog of n tools from the eight real MCP
// servers committed with the transfer example (105 tools): copy c of server
// S becomes namespace "S-c". Scopes follow what real deployments use, per
// server copy: read-only tools need "S-c:read", other tools "S-c:write",
// destructive ones also "S-c:admin"; the "everything" demo server's tools
// need no scope. One server copy in twenty is restricted to one tenant of
// ten. So a 10,000-tool catalog has about 95 server copies and 700
// distinct scopes, a 100,000-tool one about 7,000.
func syntheticCatalog(tb testing.TB, n int) []Tool {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(tb), "examples/transfer/catalog/*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no real MCP catalogs in examples/transfer/catalog: %v", err)
	}
	var base []Tool
	for _, f := range files {
		ts, err := loadServer(f)
		if err != nil {
			tb.Fatal(err)
		}
		base = append(base, ts...)
	}
	out := make([]Tool, 0, n)
	for c := 0; len(out) < n; c++ {
		for _, t := range base {
			if len(out) == n {
				break
			}
			ns := fmt.Sprintf("%s-%d", t.Namespace(), c)
			t.ID = ns + "/" + t.Name()
			t.Card.Scopes = nil
			if t.Namespace() != "everything" {
				switch {
				case t.Card.ReadOnly:
					t.Card.Scopes = []string{ns + ":read"}
				case t.Card.Irreversible:
					t.Card.Scopes = []string{ns + ":write", ns + ":admin"}
				default:
					t.Card.Scopes = []string{ns + ":write"}
				}
			}
			t.Tenants = nil
			if c%20 == 7 {
				t.Tenants = []string{fmt.Sprintf("tenant%d", c%10)}
			}
			out = append(out, t)
		}
	}
	return out
}

// benchPrincipal holds read and write (not admin) on three server copies
// spread over the synthetic catalog, whatever its size, plus two scopes no
// tool needs: 24 servers, about 40 scopes, what a busy user holds.
func benchPrincipal(ts []Tool) Principal {
	p := Principal{ID: "alice", Tenant: "tenant7", Scopes: []string{"profile", "email"}}
	step := max(1, len(ts)/105/3)
	seen := map[string]bool{}
	for i, t := range ts {
		if (i/105)%step != 0 || i/105/step >= 3 {
			continue
		}
		for _, s := range t.Card.Scopes {
			if !seen[s] && !strings.HasSuffix(s, ":admin") {
				seen[s] = true
				p.Scopes = append(p.Scopes, s)
			}
		}
	}
	return p
}

func BenchmarkSnapshotAuthorize(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		ts := syntheticCatalog(b, n)
		r := NewRegistry()
		if err := r.Add(ts...); err != nil {
			b.Fatal(err)
		}
		s := r.Snapshot()
		p := benchPrincipal(ts)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var v *View
			cpu0 := cputime.Process()
			for b.Loop() {
				v = s.Authorize(p)
			}
			// CPU time per op: on a machine shared with other work, ns/op
			// includes time spent waiting for a core; cpu-ns/op does not.
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(v.Len()), "allowed")
			b.ReportMetric(float64(len(s.scopes)), "scopes")
			b.ReportMetric(float64(len(s.setStart)-1), "scope-sets")
			b.ReportMetric(float64(len(p.Scopes)), "held")
		})
	}
}

// BenchmarkSnapshotMemory reports heap bytes per tool: "index-B/tool" is
// what a Snapshot's authorization index and ID map cost beyond the tools
// themselves; "registry-B/tool" what [Registry.Add] costs per tool (its own
// copy of the tool with its slices and schema, the ID map, the first
// snapshot), with strings shared with the caller's tools; "loaded-B/tool"
// what one tool loaded from the real MCP catalogs costs in all (strings,
// card, schema), measured on the 105 real tools. The numbers, not the
// time, are the result: run it with -benchtime 1x.
func BenchmarkSnapshotMemory(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(b), "examples/transfer/catalog/*.json"))
	before := heapInUse()
	var loaded [][]Tool
	n := 0
	for _, f := range files {
		ts, err := loadServer(f)
		if err != nil {
			b.Fatal(err)
		}
		loaded = append(loaded, ts)
		n += len(ts)
	}
	loadedBytes := float64(heapInUse()-before) / float64(n)
	runtime.KeepAlive(loaded)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ts := syntheticCatalog(b, n)
			var indexBytes, registryBytes float64
			for b.Loop() {
				before := heapInUse()
				r := NewRegistry()
				if err := r.Add(ts...); err != nil {
					b.Fatal(err)
				}
				afterAdd := heapInUse()
				list := append([]*Tool(nil), r.Snapshot().tools...)
				before2 := heapInUse()
				s := newSnapshot(list, 1)
				after := heapInUse()
				indexBytes = float64(after-before2) / float64(n)
				registryBytes = float64(afterAdd-before) / float64(n)
				runtime.KeepAlive(r)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(indexBytes, "index-B/tool")
			b.ReportMetric(registryBytes, "registry-B/tool")
			b.ReportMetric(loadedBytes, "loaded-B/tool")
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// loadServer defines the tools of one committed MCP tools/list file, in
// the namespace of its file stem, through the typed path ([DefineAll]).
func loadServer(path string) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list struct{ Tools []Definition }
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	ns, _, _ := strings.Cut(filepath.Base(path), ".")
	ts, errs := DefineAll(ns, list.Tools)
	return ts, errors.Join(errs...)
}

// BenchmarkViewResolve resolves bare names on the synthetic catalog:
// "unique" a name one tool has (the "everything" server's, in its first
// copy only: renamed), "shared" create_issue, which every GitHub and
// GitLab copy has (ambiguous, with the caller's few candidates), and
// "first" the first look-up on a new snapshot, which builds the name
// index. The view is computed once, outside the loop.
func BenchmarkViewResolve(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		ts := syntheticCatalog(b, n)
		ts[0].ID, ts[0].Card.Name = ts[0].Namespace()+"/only_here", "only_here"
		r := NewRegistry()
		if err := r.Add(ts...); err != nil {
			b.Fatal(err)
		}
		v := r.Snapshot().Authorize(benchPrincipal(ts))
		v.Resolve("") // builds the name index
		for _, name := range []string{"only_here", "create_issue"} {
			what := map[string]string{"only_here": "unique", "create_issue": "shared"}[name]
			b.Run(fmt.Sprintf("tools=%d/%s", n, what), func(b *testing.B) {
				b.ReportAllocs()
				var cands []string
				cpu0 := cputime.Process()
				for b.Loop() {
					_, cands = v.Resolve(name)
				}
				b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(len(cands)), "candidates")
			})
		}
		b.Run(fmt.Sprintf("tools=%d/first", n), func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				s := newSnapshot(slices.Clone(v.Snapshot().tools), 1)
				cpu0 := cputime.Process()
				b.StartTimer()
				s.SameModelName("tenant7", "create_issue")
				cpu += cputime.Process() - cpu0
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
