package discovery_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/atomicfile"
	"github.com/toolgate/toolgate/internal/atomicfile/atomicfiletest"
	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// rankings returns every query's shortlist (IDs and scores) over snap.
func rankings(t *testing.T, d *discovery.Discoverer, snap *tools.Snapshot, queries []string) [][]discovery.Candidate {
	t.Helper()
	view := snap.Authorize(tools.Principal{ID: "p", Tenant: "t"})
	var out [][]discovery.Candidate
	for _, q := range queries {
		sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		for i := range sl.Candidates {
			sl.Candidates[i].Tool = &tools.Tool{ID: sl.Candidates[i].Tool.ID}
		}
		out = append(out, sl.Candidates)
	}
	return out
}

func indexFile(t *testing.T, snap *tools.Snapshot, path string, opts *discovery.Options) (*discovery.Discoverer, discovery.IndexFileReport) {
	t.Helper()
	d := newDiscoverer(t, opts)
	_, rep, err := d.IndexFile(context.Background(), snap, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d, rep
}

func TestIndexFile(t *testing.T) {
	ds := realMCP(t)
	var queries []string
	for _, q := range ds.queries {
		queries = append(queries, q.Query)
	}
	want := rankings(t, newDiscoverer(t, nil), ds.snap, queries)
	path := filepath.Join(t.TempDir(), "real.tgidx")
	n := ds.snap.Len()
	// put replaces the index file with data.
	put := func(t *testing.T, data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	d, rep := indexFile(t, ds.snap, path, nil)
	if !errors.Is(rep.Warning, discovery.ErrIndexFile) || !rep.Saved || rep.Analysed != n {
		t.Fatalf("first use: %+v, want a warning, all %d analysed and the file saved", rep, n)
	}
	if got := rankings(t, d, ds.snap, queries); !reflect.DeepEqual(got, want) {
		t.Fatal("the index built beside the file ranks differently")
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	d, rep = indexFile(t, ds.snap, path, nil)
	if rep.Warning != nil || rep.Saved || rep.Reused != n || rep.Analysed != 0 {
		t.Fatalf("restart: %+v, want all %d reused, no warning, nothing written", rep, n)
	}
	if got := rankings(t, d, ds.snap, queries); !reflect.DeepEqual(got, want) {
		t.Fatal("the index read from the file ranks differently from one built from the catalog")
	}

	broken := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)/2]},
		{"one byte flipped", func() []byte { b := append([]byte(nil), good...); b[len(b)/3] ^= 0x40; return b }()},
		{"checksum flipped", func() []byte { b := append([]byte(nil), good...); b[len(b)-1] ^= 1; return b }()},
		{"not an index", []byte(`{"tools":[]}`)},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
	}
	for _, tc := range broken {
		t.Run(tc.name, func(t *testing.T) {
			put(t, tc.data)
			d, rep := indexFile(t, ds.snap, path, nil)
			if !errors.Is(rep.Warning, discovery.ErrIndexFile) || rep.Reused != 0 || !rep.Saved {
				t.Fatalf("%+v, want a warning, nothing reused, the file written again", rep)
			}
			if got := rankings(t, d, ds.snap, queries); !reflect.DeepEqual(got, want) {
				t.Fatal("ranks differently after rebuilding")
			}
			if _, rep := indexFile(t, ds.snap, path, nil); rep.Warning != nil || rep.Reused != n {
				t.Fatalf("the file written again: %+v, want all reused", rep)
			}
		})
	}

	// A lexicon that differs in a word no probe sentence holds is
	// another lexicon all the same: the file is not trusted.
	t.Run("another lexicon", func(t *testing.T) {
		put(t, good)
		lex := editedLexicon(t, func(src *lexicon.Source) {
			src.Tools = append(src.Tools, lexicon.Entry{Key: "frobnicate", Values: []string{"zorblax"}})
		})
		if lex.Digest() == lexicon.Default().Digest() {
			t.Fatal("a lexicon with one more entry has the default's digest")
		}
		_, rep := indexFile(t, ds.snap, path, &discovery.Options{Lexicon: lex})
		if !errors.Is(rep.Warning, discovery.ErrIndexFile) || rep.Reused != 0 {
			t.Fatalf("a Discoverer with another lexicon reading the default's file: %+v, want a warning and nothing reused", rep)
		}
	})

	t.Run("other configuration", func(t *testing.T) {
		put(t, good)
		_, rep := indexFile(t, ds.snap, path, &discovery.Options{NoDense: true})
		if !errors.Is(rep.Warning, discovery.ErrIndexFile) || rep.Reused != 0 {
			t.Fatalf("a lexical-only Discoverer reading a hybrid file: %+v, want a warning and nothing reused", rep)
		}
	})

	t.Run("stale", func(t *testing.T) {
		put(t, good)
		ts := make([]tools.Tool, 0, n)
		for _, tool := range ds.snap.Tools()[1:] { // the first removed
			ts = append(ts, *tool)
		}
		ts[0].Description += " Also archives it."
		snap := catalogtest.Registry(t, ts...).Snapshot()
		d, rep := indexFile(t, snap, path, nil)
		if !errors.Is(rep.Warning, discovery.ErrIndexFile) || rep.Analysed != 1 || rep.Reused != n-2 || !rep.Saved {
			t.Fatalf("%+v, want a stale warning, the changed tool analysed, %d reused", rep, n-2)
		}
		if got, want := rankings(t, d, snap, queries), rankings(t, newDiscoverer(t, nil), snap, queries); !reflect.DeepEqual(got, want) {
			t.Fatal("the index of a stale file ranks differently from one built from the catalog")
		}
	})
}

// TestIndexFileNotAFile: an index file path that names a named pipe, a
// device or a folder is never read (an open of a pipe with no writer
// blocked forever) nor replaced: the warning and the write's error name
// the path, and the index is still built.
func TestIndexFileNotAFile(t *testing.T) {
	snap := catalogtest.Snapshot(t, filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/memory.json"))
	for _, tt := range atomicfiletest.NotFiles(t) {
		t.Run(tt.Name, func(t *testing.T) {
			d := newDiscoverer(t, nil)
			x, rep, err := d.IndexFile(context.Background(), snap, tt.Path, nil)
			if !errors.Is(rep.Warning, discovery.ErrIndexFile) || !errors.Is(rep.Warning, atomicfile.ErrNotRegular) || !strings.Contains(rep.Warning.Error(), tt.Path) {
				t.Errorf("warning %v, want one naming %s as not a regular file", rep.Warning, tt.Path)
			}
			if !errors.Is(err, atomicfile.ErrNotRegular) || rep.Saved {
				t.Errorf("error %v (saved %v), want the write refused", err, rep.Saved)
			}
			if x == nil || rep.Analysed != snap.Len() {
				t.Errorf("index %v, %d of %d tools analysed", x != nil, rep.Analysed, snap.Len())
			}
			if st, err := os.Stat(tt.Path); err != nil || st.Mode().IsRegular() {
				t.Errorf("%s replaced: %v, %v", tt.Path, st, err)
			}
		})
	}
}
