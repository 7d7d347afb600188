package discovery

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
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
		{"keys", a.keys, b.keys},
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
	ts, err := bigcatalog.Tools(realTools(t), 2000)
	if err != nil {
		t.Fatal(err)
	}
	reg := catalogtest.Registry(t, ts...)
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := d.Index(ctx, reg.Snapshot()); err != nil {
		t.Fatal(err)
	}
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
		ts, err := bigcatalog.Tools(realTools(t), 1000)
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
