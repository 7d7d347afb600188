package embedcache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

const model = "ollama http://127.0.0.1:11434 nomic-embed-text"

func open(t *testing.T, dir, model string) (*embedcache.Cache, *[]string) {
	t.Helper()
	var warnings []string
	c, err := embedcache.Open(dir, model, func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	return c, &warnings
}

func add(t *testing.T, c *embedcache.Cache, texts ...string) {
	t.Helper()
	keys := make([]embedcache.Key, len(texts))
	vecs := make([][]float32, len(texts))
	for i, s := range texts {
		keys[i] = embedcache.KeyOf(s)
		vecs[i] = []float32{float32(len(s)), 1, -2}
	}
	if err := c.Add(keys, vecs); err != nil {
		t.Fatal(err)
	}
}

func TestSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	c, warnings := open(t, dir, model)
	add(t, c, "send money", "check balance")
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c2, warnings2 := open(t, dir, model)
	if c2.Loaded() != 2 || c2.Dim() != 3 {
		t.Fatalf("reopened: Loaded() = %d, Dim() = %d, want 2 and 3", c2.Loaded(), c2.Dim())
	}
	v, ok := c2.Lookup(embedcache.KeyOf("send money"))
	if !ok || !slices.Equal(v, []float32{10, 1, -2}) {
		t.Errorf("Lookup(send money) = %v, %v, want [10 1 -2], true", v, ok)
	}
	if _, ok := c2.Lookup(embedcache.KeyOf("send money!")); ok {
		t.Error("Lookup of a changed text found a vector")
	}
	if len(*warnings)+len(*warnings2) != 0 {
		t.Errorf("warnings %q, want none", append(*warnings, *warnings2...))
	}
	// Another model has its own file.
	other, _ := open(t, dir, model+"-v2")
	if other.Loaded() != 0 || other.Path() == c.Path() {
		t.Errorf("another model: Loaded() = %d, path %s, want 0 and its own file", other.Loaded(), other.Path())
	}
}

func TestUntrustedFileIgnored(t *testing.T) {
	dir := t.TempDir()
	c, _ := open(t, dir, model)
	add(t, c, "a", "bb", "ccc")
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.Path())
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 1; return b }
	version := bytes.Clone(good)
	binary.LittleEndian.PutUint32(version[8:], embedcache.Version+1)
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint32(huge[16:], 1<<31)
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"truncated", "bytes", good[:len(good)-5]},
		{"flipped vector byte", "checksum", flip(len(good) - 40)},
		{"flipped checksum", "checksum", flip(len(good) - 1)},
		{"other version", "version", version},
		{"huge count", "entries", huge},
		{"not a cache", "magic", []byte(strings.Repeat("x", 100))},
		{"empty", "shorter", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(c.Path(), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			c2, warnings := open(t, dir, model)
			if c2.Len() != 0 {
				t.Errorf("Len() = %d, want 0: the file must not be trusted", c2.Len())
			}
			if len(*warnings) != 1 || !strings.Contains((*warnings)[0], tc.want) {
				t.Errorf("warnings %q, want one naming %q", *warnings, tc.want)
			}
			// The next save replaces it with a good file.
			add(t, c2, "dd")
			if err := c2.Save(); err != nil {
				t.Fatal(err)
			}
			if c3, w := open(t, dir, model); c3.Len() != 1 || len(*w) != 0 {
				t.Errorf("after Save: Len() = %d, warnings %q, want 1 and none", c3.Len(), *w)
			}
		})
	}
	t.Run("another model's file", func(t *testing.T) {
		if err := os.WriteFile(c.Path(), good, 0o644); err != nil {
			t.Fatal(err)
		}
		// A file renamed into another model's place.
		other := embedcache.Path(dir, "other")
		if err := os.Rename(c.Path(), other); err != nil {
			t.Fatal(err)
		}
		c2, warnings := open(t, dir, "other")
		if c2.Len() != 0 || len(*warnings) != 1 || !strings.Contains((*warnings)[0], "holds the vectors of") {
			t.Errorf("Len() = %d, warnings %q, want 0 and one naming the model", c2.Len(), *warnings)
		}
	})
}

func TestDimensionChangeDropsOldVectors(t *testing.T) {
	c, warnings := open(t, t.TempDir(), model)
	add(t, c, "a", "b")
	if err := c.Add([]embedcache.Key{embedcache.KeyOf("c")}, [][]float32{{1, 2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 1 || c.Dim() != 4 || len(*warnings) != 1 {
		t.Errorf("Len() = %d, Dim() = %d, warnings %q, want 1, 4 and one warning", c.Len(), c.Dim(), *warnings)
	}
}

func TestAddRefusesBadVectors(t *testing.T) {
	c, _ := open(t, t.TempDir(), model)
	nan := float32(0)
	nan /= nan
	for _, tc := range []struct {
		name string
		vecs [][]float32
	}{
		{"empty vector", [][]float32{{}}},
		{"NaN", [][]float32{{1, nan}}},
		{"mixed lengths", [][]float32{{1, 2}, {1}}},
		{"too long", [][]float32{make([]float32, embedcache.MaxDim+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := make([]embedcache.Key, len(tc.vecs))
			for i := range keys {
				keys[i][0] = byte(i)
			}
			if err := c.Add(keys, tc.vecs); err == nil || c.Len() != 0 {
				t.Errorf("Add = %v, Len() = %d, want an error and nothing added", err, c.Len())
			}
		})
	}
}

// TestConcurrentSaves saves from several caches of one file at once, as
// processes would: the file is always whole, and holds every entry of
// those that saved last.
func TestConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		c, _ := open(t, dir, model)
		add(t, c, strings.Repeat("x", i+1))
		wg.Go(func() { errs[i] = c.Save() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	c, warnings := open(t, dir, model)
	if c.Len() == 0 || len(*warnings) != 0 {
		t.Errorf("after concurrent saves: Len() = %d, warnings %q, want a whole file", c.Len(), *warnings)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*")); len(tmp) != 0 { // atomicfile's temporary files
		t.Errorf("temporary files left: %v", tmp)
	}
	// A save after reading merges: each process adds one more and saves in turn.
	for i := range n {
		c, _ := open(t, dir, model)
		add(t, c, strings.Repeat("y", i+1))
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := open(t, dir, model); c.Len() < n {
		t.Errorf("after sequential saves Len() = %d, want at least %d", c.Len(), n)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	f := &embedcache.File{Model: model, Dim: 2, Entries: []embedcache.Entry{
		{Key: embedcache.KeyOf("a"), Used: 7, Vec: []float32{0.5, -1}},
		{Key: embedcache.KeyOf("b"), Used: 9, Vec: []float32{3, 4}},
	}}
	var buf bytes.Buffer
	if err := embedcache.Encode(&buf, f); err != nil {
		t.Fatal(err)
	}
	g, err := embedcache.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if g.Model != f.Model || g.Dim != 2 || len(g.Entries) != 2 || g.Entries[1].Used != 9 || !slices.Equal(g.Entries[1].Vec, []float32{3, 4}) {
		t.Errorf("Decode(Encode(f)) = %+v, want %+v", g, f)
	}
	if err := embedcache.Encode(&buf, &embedcache.File{Dim: 2, Entries: []embedcache.Entry{{Vec: []float32{1}}}}); err == nil {
		t.Error("Encode of a vector of the wrong length succeeded")
	}
}

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	_ = embedcache.Encode(&buf, &embedcache.File{Model: "m", Dim: 2, Entries: []embedcache.Entry{{Used: 1, Vec: []float32{1, 2}}}})
	f.Add(buf.Bytes())
	f.Add([]byte("TGEMBVEC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := embedcache.Decode(data)
		if err != nil {
			if !errors.Is(err, embedcache.ErrCorrupt) {
				t.Fatalf("Decode error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		var out bytes.Buffer
		if err := embedcache.Encode(&out, g); err != nil {
			t.Fatalf("Encode of a decoded file: %v", err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatal("Encode(Decode(data)) differs from data")
		}
	})
}
