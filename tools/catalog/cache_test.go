package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/toolgate/toolgate/internal/atomicfile"
	"github.com/toolgate/toolgate/internal/atomicfile/atomicfiletest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
)

// cacheSpecs copies catalogs of every format into a temporary folder and
// returns their specs: the example's MCP tools/list files, a JSON Lines
// file with every field, and a JSON array.
func cacheSpecs(t testing.TB) (dir string, specs []string) {
	t.Helper()
	dir = t.TempDir()
	example, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	if len(example) == 0 {
		t.Fatal("no example catalogs")
	}
	for _, src := range example[:3] {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, dst)
	}
	files := map[string]string{
		"mail.jsonl": `{"name":"send_mail","title":"Send mail","description":"Send an e-mail now. It is delivered at once.",` +
			`"inputSchema":{"type":"object","properties":{"to":{"type":"string"}}},"scopes":["mail:send"],` +
			`"aliases":["email someone",""],"not_for":"Use draft_mail to only prepare one.","tags":[],"group":"mail",` +
			`"tenants":["acme"],"annotations":{"destructiveHint":true,"idempotentHint":true,"openWorldHint":true}}
{"name":"read_mail","summary":"Read your inbox","description":"Long text ünïcode 🙂.","annotations":{"readOnlyHint":true}}
{"name":"wipe","irreversible":true,"inputSchema":{}}
`,
		"array.json": `[{"name":"a","description":"Send an e-mail now.","inputSchema":{"type":"object","properties":{"to":{"type":"string"}}}},{"name":"b"}]`,
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, "x"+name[:1]+"="+path)
	}
	return dir, specs
}

// loadCached calls [LoadFilesCached] and checks its result against
// LoadFiles'.
func loadCached(t *testing.T, cache string, specs []string) CacheReport {
	t.Helper()
	want, wantErr := LoadFiles(specs...)
	got, rep, err := LoadFilesCached(cache, specs...)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("LoadFilesCached: error %v, LoadFiles %v", err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadFilesCached (%+v) returned other files than LoadFiles:\n%+v\nwant\n%+v", rep, got, want)
	}
	if rep.Warning != nil && !errors.Is(rep.Warning, ErrCache) {
		t.Fatalf("warning %v does not wrap ErrCache", rep.Warning)
	}
	return rep
}

func TestLoadFilesCached(t *testing.T) {
	dir, specs := cacheSpecs(t)
	cache := filepath.Join(dir, "cat.cache")
	rep := loadCached(t, cache, specs)
	if rep.Hit || !rep.Saved || rep.Warning != nil {
		t.Fatalf("first load: %+v, want a miss with no warning, and the cache saved", rep)
	}
	if rep := loadCached(t, cache, specs); !rep.Hit || rep.Saved || rep.Warning != nil {
		t.Fatalf("second load: %+v, want a hit", rep)
	}
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	broken := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)/2]},
		{"one byte flipped", func() []byte { b := slices.Clone(good); b[len(b)/3] ^= 0x40; return b }()},
		{"checksum flipped", func() []byte { b := slices.Clone(good); b[len(b)-1] ^= 1; return b }()},
		{"trailing byte", fixCRC(append(slices.Clone(good[:len(good)-4]), 0, 0, 0, 0, 0))},
		{"body cut short", fixCRC(append(slices.Clone(good[:len(good)-40]), 0, 0, 0, 0))},
		{"not a cache", []byte(`{"tools":[]}`)},
	}
	for _, tc := range broken {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(cache, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if rep := loadCached(t, cache, specs); rep.Hit || !rep.Saved || rep.Warning == nil {
				t.Fatalf("%+v, want a miss with a warning, and the cache written again", rep)
			}
			if rep := loadCached(t, cache, specs); !rep.Hit {
				t.Fatalf("the cache written again: %+v, want a hit", rep)
			}
		})
	}

	t.Run("a file changed", func(t *testing.T) {
		path, _ := ParseSpec(specs[len(specs)-1])
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\n")
		f.Close()
		if rep := loadCached(t, cache, specs); rep.Hit || !rep.Saved || rep.Warning == nil {
			t.Fatalf("%+v, want a stale warning and the cache written again", rep)
		}
		// Same size, other bytes.
		data, _ := os.ReadFile(path)
		data[len(data)-1] = ' '
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if rep := loadCached(t, cache, specs); rep.Hit {
			t.Fatalf("%+v, want a miss", rep)
		}
	})

	t.Run("other specs", func(t *testing.T) {
		loadCached(t, cache, specs)
		others := []struct {
			name  string
			specs []string
		}{
			{"one fewer", specs[1:]},
			{"another order", append(slices.Clone(specs[1:]), specs[0])},
			{"another namespace", append([]string{"ns=" + specs[0]}, specs[1:]...)},
		}
		for _, o := range others {
			t.Run(o.name, func(t *testing.T) {
				if rep := loadCached(t, cache, o.specs); rep.Hit {
					t.Fatalf("%v: %+v, want a miss", o.specs, rep)
				}
				loadCached(t, cache, specs)
			})
		}
	})

	t.Run("a load with errors is not saved", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.jsonl")
		os.WriteFile(bad, []byte("{\"name\":\"ok\"}\n{\"name\":\n"), 0o644)
		os.Remove(cache)
		if rep := loadCached(t, cache, append(slices.Clone(specs), bad)); rep.Hit || rep.Saved {
			t.Fatalf("%+v, want no hit and nothing saved", rep)
		}
		if _, err := os.Stat(cache); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("cache after a load with errors: %v", err)
		}
		if rep := loadCached(t, cache, append(slices.Clone(specs), filepath.Join(dir, "missing.jsonl"))); rep.Hit || rep.Saved {
			t.Fatalf("a missing file: %+v, want no hit and nothing saved", rep)
		}
	})

	t.Run("a device is not cached", func(t *testing.T) {
		os.Remove(cache)
		if rep := loadCached(t, cache, append(slices.Clone(specs), os.DevNull)); rep.Hit || rep.Saved || rep.Warning != nil {
			t.Fatalf("%+v, want the files loaded without the cache", rep)
		}
		if _, err := os.Stat(cache); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("cache after a load with a device: %v", err)
		}
	})

	t.Run("unwritable", func(t *testing.T) {
		rep := loadCached(t, filepath.Join(dir, "no", "such", "dir", "c"), specs)
		if rep.Hit || rep.Saved || !errors.Is(rep.Warning, ErrCache) {
			t.Fatalf("%+v, want a warning and nothing saved", rep)
		}
	})
}

// TestCacheKeepsEveryField: a tool with every field set comes back from
// a cache as it went in. A field added to [tools.Tool] or [tools.Card] fails
// here until the cache carries it.
func TestCacheKeepsEveryField(t *testing.T) {
	tool := tools.Tool{
		ID: "ns/x", Title: "T", Description: "D", InputSchema: []byte(`{"type":"object"}`),
		Tenants: []string{"a", ""}, Timeout: 3 * time.Second,
		Handler: nil, // not a catalog's: never cached
		Card: tools.Card{Name: "x", Summary: "S", Scopes: []string{"s"}, Aliases: []string{"al"}, NotFor: "N",
			Tags: []string{"t1", "t2"}, Examples: []string{"e"}, Group: "G", ReadOnly: true, Irreversible: true,
			Idempotent: true, OpenWorld: true},
	}
	for _, v := range []reflect.Value{reflect.ValueOf(tool), reflect.ValueOf(tool.Card)} {
		t.Run(v.Type().Name(), func(t *testing.T) {
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.Name != "Handler" && v.Field(i).IsZero() {
					t.Fatalf("%s.%s is not set: set it here and make the cache carry it", v.Type().Name(), f.Name)
				}
			}
		})
	}
	empty := tools.Tool{ID: "ns/y", InputSchema: []byte{}, Card: tools.Card{Name: "y", Tags: []string{}}}
	in := []File{{Path: "p", Namespace: "ns", Format: FormatToolsList, Tools: []tools.Tool{tool, empty, {ID: "ns/z"},
		{ID: "ns/w", InputSchema: tool.InputSchema}, {ID: "ns/v", InputSchema: []byte(`{"x":1}`)}}}, {Path: "q"}}
	var buf bytes.Buffer
	if err := encodeCache(&buf, nil, nil, in); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	c, err := parseCache(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.files, in) {
		t.Fatalf("from the cache:\n%+v\nwant\n%+v", c.files, in)
	}
}

// TestCacheOwnsStrings: where schemas are most of a cache, its tools'
// strings and schemas are moved out of its bytes (which then go, whether
// a registry copies the schemas or adopts them); elsewhere they stay
// there, one block.
func TestCacheOwnsStrings(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema string
		moved  bool
	}{
		{"small schemas", `{"type":"object"}`, false},
		{"big schemas", `{"type":"object","description":"` + strings.Repeat("x", 4000) + `"}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ts []tools.Tool
			for i := range 50 {
				ts = append(ts, tools.Tool{ID: fmt.Sprintf("ns/t%d", i), Description: strings.Repeat("d", 200),
					InputSchema: []byte(tt.schema[:len(tt.schema)-1] + fmt.Sprintf(`,"n":%d}`, i)),
					Card:        tools.Card{Name: fmt.Sprintf("t%d", i), Tags: []string{"tag"}}})
			}
			var buf bytes.Buffer
			if err := encodeCache(&buf, nil, nil, []File{{Path: "p", Namespace: "ns", Format: FormatJSONLines, Tools: ts}}); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			c, err := parseCache(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[len(data)-1]))
			inData, all := 0, 0
			c.eachString(func(s *string) {
				if *s != "" {
					all++
					if p := uintptr(unsafe.Pointer(unsafe.StringData(*s))); p >= lo && p <= hi {
						inData++
					}
				}
			})
			if tt.moved && inData != 0 || !tt.moved && inData != all {
				t.Fatalf("%d of %d strings point into the cache's bytes, want %v", inData, all, map[bool]string{true: "none", false: "all"}[tt.moved])
			}
			inData = 0
			for _, tl := range c.files[0].Tools {
				if p := uintptr(unsafe.Pointer(&tl.InputSchema[0])); p >= lo && p <= hi {
					inData++
				}
			}
			if tt.moved && inData != 0 || !tt.moved && inData != len(ts) {
				t.Fatalf("%d of %d schemas point into the cache's bytes, want %v", inData, len(ts), map[bool]string{true: "none", false: "all"}[tt.moved])
			}
			if !reflect.DeepEqual(c.files[0].Tools, ts) {
				t.Fatal("the tools changed on the way")
			}
		})
	}
}

func FuzzParseCache(f *testing.F) {
	dir, specs := cacheSpecs(f)
	cache := filepath.Join(dir, "c")
	if _, _, err := LoadFilesCached(cache, specs...); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(cache)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte(cacheMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// As given, and with its checksum made right, so that the parser
		// behind the checksum is reached.
		for i, b := range [][]byte{data, fixCRC(data)} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				c, err := parseCache(b, nil)
				if err != nil {
					return
				}
				if len(c.specs) != len(c.sums) {
					t.Fatalf("%d specs, %d sums", len(c.specs), len(c.sums))
				}
				for _, f := range c.files {
					for _, tool := range f.Tools {
						_ = tool.Validate() // reads every string and schema
					}
				}
			})
		}
	})
}

func fixCRC(data []byte) []byte {
	b := slices.Clone(data)
	if len(b) >= 4 {
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], cacheCRC))
	}
	return b
}

// TestCacheNotAFile: a cache path that names a named pipe, a device or a
// folder is never read (an open of a pipe with no writer blocked
// forever) nor replaced: the files are loaded and the warning names the
// path.
func TestCacheNotAFile(t *testing.T) {
	_, specs := cacheSpecs(t)
	for _, tt := range atomicfiletest.NotFiles(t) {
		t.Run(tt.Name, func(t *testing.T) {
			rep := loadCached(t, tt.Path, specs)
			if rep.Hit || rep.Saved || !errors.Is(rep.Warning, atomicfile.ErrNotRegular) || !strings.Contains(rep.Warning.Error(), tt.Path) {
				t.Errorf("%+v, want a warning naming %s as not a regular file", rep, tt.Path)
			}
			if st, err := os.Stat(tt.Path); err != nil || st.Mode().IsRegular() {
				t.Errorf("%s replaced: %v, %v", tt.Path, st, err)
			}
		})
	}
}

// TestCacheHeaderReadFirst: a cache file that is not one of this
// toolgate's (another file, another version, a file of zeros) is told so
// from its first bytes: its size is not allocated, nor is the rest read.
// A garbage file of 1 GiB cost discover 1.2 GB of memory and 6 to 12 s.
func TestCacheHeaderReadFirst(t *testing.T) {
	dir, specs := cacheSpecs(t)
	cache := filepath.Join(dir, "cat.cache")
	loadCached(t, cache, specs)
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20 // the rest sparse: neither written nor stored
	tests := []struct {
		name   string
		header []byte
		want   string
	}{
		{"zeros", nil, "not a toolgate catalog cache"},
		{"another version", binary.LittleEndian.AppendUint32([]byte(cacheMagic), cacheVersion+1), "format version"},
		{"another toolgate", func() []byte {
			b := slices.Clone(good[:len(cacheMagic)+8])
			b[len(b)-1] ^= 1 // the fingerprint's length
			return b
		}(), "another toolgate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Create(cache)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Write(tt.header)
			if err == nil {
				err = f.Truncate(size)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = readCache(cache, specs)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), cache) {
				t.Fatalf("readCache: %v, want an error naming %s and saying %q", err, cache, tt.want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > size/8 {
				t.Fatalf("readCache allocated %d bytes for a %d-byte file that is not a cache", got, size)
			}
		})
	}
}
