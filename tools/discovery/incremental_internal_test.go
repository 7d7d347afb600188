package discovery

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
)

// realTools are the real MCP catalogs' tools.
func realTools(t testing.TB) []*tools.Tool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	if len(files) == 0 {
		t.Fatal("no catalogs in examples/transfer/catalog")
	}
	return catalogtest.Snapshot(t, files...).Tools()
}

// handleTools are the real MCP catalogs' tools and a calendar's tools
// that need a token or a meeting's id, with the tools that produce them:
// an index of their copies has companions to compare and to save.
func handleTools(t testing.TB) []*tools.Tool {
	t.Helper()
	ts := realTools(t)
	for _, c := range []struct{ id, desc, schema string }{
		{"cal/add_event", "Add an event to the user's calendar.", `{"type":"object","properties":{"title":{"type":"string"},"token":{"type":"string","description":"The user's authentication token."}},"required":["title","token"]}`},
		{"cal/get_user_token", "Log a user in and return their authentication token.", `{"type":"object","properties":{"username":{"type":"string"}},"required":["username"]}`},
		{"cal/cancel_meeting", "Cancel a meeting.", `{"type":"object","properties":{"meeting_id":{"type":"string"}},"required":["meeting_id"]}`},
		{"cal/list_meetings", "List the user's meetings.", `{"type":"object","properties":{}}`},
	} {
		ts = append(ts, &tools.Tool{ID: c.id, Description: c.desc, InputSchema: json.RawMessage(c.schema)})
	}
	return ts
}

// indexedBig grows the real catalogs to n tools, registers them and
// indexes them with a default Discoverer, which it returns for the next
// (incremental) build.
func indexedBig(t *testing.T, n int) ([]tools.Tool, *tools.Registry, *Discoverer) {
	t.Helper()
	ts, err := bigcatalog.Tools(handleTools(t), n)
	if err != nil {
		t.Fatal(err)
	}
	reg := catalogtest.Registry(t, ts...)
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Index(context.Background(), reg.Snapshot()); err != nil {
		t.Fatal(err)
	}
	return ts, reg, d
}

// sameIndex fails t unless a and b hold the same search structures.
func sameIndex(t *testing.T, a, b *Index) {
	t.Helper()
	checks := []struct {
		name string
		a, b any
	}{
		{"terms", a.terms, b.terms},
		{"postings", a.postings, b.postings},
		{"negative", a.negative, b.negative},
		{"base", a.basePostings(), b.basePostings()},
		{"rows", a.rows, b.rows},
		{"scales", a.scales, b.scales},
		{"tokens", a.tokens, b.tokens},
		{"kinds", a.kinds, b.kinds},
		{"widen", a.widen, b.widen},
		{"suffixed", a.suffixed, b.suffixed},
		{"keys", a.keys, b.keys},
		{"companions", a.companions, b.companions},
	}
	if a.companions == nil && a.companionsBuilt {
		t.Error("the index has no companions to compare: use a catalog with some (handleTools)")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(c.a, c.b) {
				t.Errorf("%s differ", c.name)
			}
		})
	}
	if len(a.patterns) != len(b.patterns) {
		t.Errorf("%d and %d identifier patterns", len(a.patterns), len(b.patterns))
	}
}

// TestNamespaceUpdate replaces one namespace's tools, as an upstream's
// list_changed does (one changed, one removed, one added, the rest new
// values of unchanged tools), and checks that only the changed and added
// tools are analysed again and that the index equals a full rebuild.
func TestNamespaceUpdate(t *testing.T) {
	ts, reg, d := indexedBig(t, 2000)
	ctx := context.Background()
	ns := ts[len(ts)/2].Namespace()
	var next []tools.Tool
	for _, tool := range reg.Snapshot().Tools() {
		if tool.Namespace() == ns {
			next = append(next, *tool)
		}
	}
	if len(next) < 3 {
		t.Fatalf("namespace %s has %d tools", ns, len(next))
	}
	next[0].Description += " It also archives the result."
	added := next[2]
	added.ID = ns + "/archive_everything"
	added.Card.Name = "archive_everything"
	next = append(next[:1], next[2:]...)
	next = append(next, added)
	if err := reg.ReplaceNamespace(ns, next); err != nil {
		t.Fatal(err)
	}
	snap := reg.Snapshot()
	x, err := d.Index(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	// The changed and the added tool are analysed again, and so is a card
	// whose text names a tool that came or went (its scrubbed words
	// change); every other card is reused.
	if got, most := x.Stats().Reused, snap.Len()-2; got > most || got < most*99/100 {
		t.Errorf("reused %d cards, want at most %d and at least 99%% of them", got, most)
	}
	fresh, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := fresh.Index(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, x, y)
}

// TestIndexFileEqualsBuild checks that an index read from its file holds
// the same search structures as one built from the catalog.
func TestIndexFileEqualsBuild(t *testing.T) {
	snap := catalogtest.Registry(t, func() []tools.Tool {
		ts, err := bigcatalog.Tools(handleTools(t), 1000)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}()...).Snapshot()
	path := filepath.Join(t.TempDir(), "x.tgidx")
	ctx := context.Background()
	d1, _ := New(nil)
	x1, rep, err := d1.IndexFile(ctx, snap, path, nil)
	if err != nil || !rep.Saved {
		t.Fatalf("%+v, %v", rep, err)
	}
	d2, _ := New(nil)
	x2, rep, err := d2.IndexFile(ctx, snap, path, nil)
	if err != nil || rep.Reused != snap.Len() {
		t.Fatalf("%+v, %v", rep, err)
	}
	sameIndex(t, x1, x2)
}

func FuzzParseIndexFile(f *testing.F) {
	ts := realTools(f)
	snap := catalogtest.Registry(f, func() []tools.Tool {
		var out []tools.Tool
		for _, t := range ts[:12] {
			out = append(out, *t)
		}
		return out
	}()...).Snapshot()
	d, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(f.TempDir(), "seed.tgidx")
	if _, _, err := d.IndexFile(context.Background(), snap, path, nil); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	// A file with companions (the twelve tools above have none).
	withCompanions := filepath.Join(f.TempDir(), "companions.tgidx")
	if _, _, err := d.IndexFile(context.Background(), catalogtest.Snapshot(f, filepath.Join(testenv.RepoRoot(f), "examples/transfer/catalog/github.json")), withCompanions, nil); err != nil {
		f.Fatal(err)
	}
	if seed, err := os.ReadFile(withCompanions); err == nil {
		f.Add(seed)
	}
	f.Add([]byte(indexMagic))
	keys := toolKeys(snap)
	f.Fuzz(func(t *testing.T, data []byte) {
		// As given, and with its checksum made right, so that the parser
		// behind the checksum is reached.
		fixed := slices.Clone(data)
		if len(fixed) >= 4 {
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc32.Checksum(fixed[:len(fixed)-4], crcTable))
		}
		for i, b := range [][]byte{data, fixed} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				fc, err := d.parseIndexFile(bytes.NewReader(b), int64(len(b)))
				if err != nil {
					return
				}
				if len(fc.keys) != len(fc.docs) || (d.embedder != nil) != (len(fc.rows) > 0) {
					t.Fatalf("%d keys, %d cards, %d row bytes", len(fc.keys), len(fc.docs), len(fc.rows))
				}
				if fc.companions != nil {
					for i, ns := range fc.companions.needs {
						for _, n := range ns {
							if int(i) >= len(fc.docs) || len(n.producers) == 0 || slices.ContainsFunc(n.producers, func(p uint32) bool { return int(p) >= len(fc.docs) }) {
								t.Fatalf("companions of tool %d name tools outside the file's %d: %+v", i, len(fc.docs), n)
							}
						}
					}
				}
				docs, err := fc.match(keys)
				if err != nil {
					return
				}
				if len(docs) != len(keys) {
					t.Fatalf("%d cards for %d keys", len(docs), len(keys))
				}
			})
		}
	})
}

// TestIndexFileCompanions checks that a restart takes the companions
// from the index file when the file holds exactly the snapshot's tools,
// and works them out again otherwise: for another catalog, and for a
// file written without them.
func TestIndexFileCompanions(t *testing.T) {
	ts, err := bigcatalog.Tools(handleTools(t), 600)
	if err != nil {
		t.Fatal(err)
	}
	snap := catalogtest.Registry(t, ts...).Snapshot()
	want := buildCompanions(snap)
	if want == nil || len(want.needs) == 0 {
		t.Fatal("the catalog has no companions to save")
	}
	ctx := context.Background()
	dir := t.TempDir()
	restart := func(t *testing.T, path string, snap *tools.Snapshot) *Index {
		t.Helper()
		d, _ := New(nil)
		x, _, err := d.IndexFile(ctx, snap, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	t.Run("read from the file", func(t *testing.T) {
		path := filepath.Join(dir, "read.tgidx")
		d, _ := New(nil)
		x, err := d.Index(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		// A file whose companions differ from the catalog's shows
		// which were used: one tool's first need loses its producers
		// but the first.
		doctored := &companionIndex{needs: maps.Clone(x.companions.needs)}
		i := slices.Min(slices.Collect(maps.Keys(doctored.needs)))
		ns := slices.Clone(doctored.needs[i])
		ns[0].producers = []uint32{uint32(snap.Len() - 1)}
		doctored.needs[i] = ns
		built := x.companions
		x.companions = doctored
		err = d.WriteIndexFile(x, path)
		x.companions = built
		if err != nil {
			t.Fatal(err)
		}
		if got := restart(t, path, snap).companions; !reflect.DeepEqual(got, doctored) {
			t.Error("the restart worked the companions out instead of reading them")
		}
	})
	t.Run("another catalog", func(t *testing.T) {
		path := filepath.Join(dir, "other.tgidx")
		restart(t, path, snap)
		fewer := catalogtest.Registry(t, ts[1:]...).Snapshot()
		if got, want := restart(t, path, fewer).companions, buildCompanions(fewer); !reflect.DeepEqual(got, want) {
			t.Error("the companions of another catalog's file were used")
		}
	})
	t.Run("written without", func(t *testing.T) {
		path := filepath.Join(dir, "without.tgidx")
		d, _ := New(&Options{NoCompanions: true})
		if _, _, err := d.IndexFile(ctx, snap, path, nil); err != nil {
			t.Fatal(err)
		}
		if got := restart(t, path, snap).companions; !reflect.DeepEqual(got, want) {
			t.Error("a file written without companions gave none")
		}
	})
}

// TestIndexFileOtherDimension: a file whose checksum and fingerprint are
// right but whose vectors have another dimension than the embedder's
// (written so by hand, or by a bug) is not used: read as it was, every
// query failed with "embedder returned malformed vectors".
func TestIndexFileOtherDimension(t *testing.T) {
	snap := catalogtest.Snapshot(t, filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/github.json"))
	ctx := context.Background()
	d, _ := New(nil)
	x, err := d.Index(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	x.dim, x.rows = 4, make([]int8, 4*len(x.docs))
	path := filepath.Join(t.TempDir(), "dim.tgidx")
	if err := d.WriteIndexFile(x, path); err != nil {
		t.Fatal(err)
	}
	d2, _ := New(nil)
	_, rep, err := d2.IndexFile(ctx, snap, path, nil)
	if err != nil || !errors.Is(rep.Warning, ErrIndexFile) || rep.Reused != 0 {
		t.Fatalf("%+v, %v; want a warning and nothing reused", rep, err)
	}
	if _, err := d2.Shortlist(ctx, snap.Authorize(tools.Principal{ID: "p", Tenant: "t"}), Request{Query: "create an issue", K: 3}); err != nil {
		t.Fatalf("a query after the file: %v", err)
	}
}
