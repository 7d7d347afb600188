package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiscoverIndexFile runs discover with --index three times: the first
// run writes the file (warning that it did not exist), the second reads it
// silently, the third finds it corrupt, warns and writes it again. The
// shortlist is the same every time, and nothing but the warnings reaches
// stderr (no progress line outside a terminal).
func TestDiscoverIndexFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "discovery.idx")
	args := append(realCatalogArgs(t), "--index", path, "--format", "json", "create an issue on github")
	code, want, stderr := runCmd(append([]string{"discover"}, args...)...)
	if code != exitOK || !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "does not exist yet") {
		t.Fatalf("first run: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the index file was not written: %v", err)
	}
	code, got, stderr := runCmd(append([]string{"discover"}, args...)...)
	if code != exitOK || stderr != "" || got != want {
		t.Fatalf("second run: exit %d, stderr %q, output equal %v", code, stderr, got == want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-9], 0o644); err != nil {
		t.Fatal(err)
	}
	code, got, stderr = runCmd(append([]string{"discover"}, args...)...)
	if code != exitOK || !strings.Contains(stderr, "corrupt") || got != want {
		t.Fatalf("corrupt file: exit %d, stderr %q, output equal %v", code, stderr, got == want)
	}
	if strings.Contains(stderr, "\r") || strings.Contains(stderr, "\033") {
		t.Fatalf("progress written to a pipe: %q", stderr)
	}
}

// TestDiscoverCatalogCache: with --index, the catalog files' load is kept
// beside the index file (FILE.catalog) and read while they are unchanged;
// a changed file is parsed again (its new tool is found), and a corrupt
// cache is warned about and written again, the shortlist unchanged.
func TestDiscoverCatalogCache(t *testing.T) {
	dir := t.TempDir()
	extra := filepath.Join(dir, "extra.jsonl")
	if err := os.WriteFile(extra, []byte(`{"name":"water_plants","description":"Water the office plants."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "discovery.idx")
	args := append(realCatalogArgs(t), "--tools", extra, "--index", index, "--format", "json")
	discover := func(query string) (string, string) {
		t.Helper()
		code, out, stderr := runCmd(append(append([]string{"discover"}, args...), query)...)
		if code != exitOK {
			t.Fatalf("discover %q: exit %d, stderr %q", query, code, stderr)
		}
		return out, stderr
	}
	want, _ := discover("create an issue on github")
	cache := index + ".catalog"
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("the catalog cache was not written: %v", err)
	}
	if got, stderr := discover("create an issue on github"); got != want || stderr != "" {
		t.Fatalf("second run: stderr %q, output equal %v", stderr, got == want)
	}

	f, err := os.OpenFile(extra, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"name":"feed_the_fish","description":"Feed the aquarium fish."}` + "\n")
	f.Close()
	got, stderr := discover("feed the aquarium fish")
	if !strings.Contains(got, "extra/feed_the_fish") || !strings.Contains(stderr, "catalog: cache not used") || !strings.Contains(stderr, "extra.jsonl changed") {
		t.Fatalf("a changed file: stderr %q, output %s", stderr, got)
	}
	want, _ = discover("create an issue on github") // of the catalog as it is now

	if err := os.WriteFile(cache, []byte("TGCATCCH garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, stderr := discover("create an issue on github"); got != want || !strings.Contains(stderr, "corrupt") {
		t.Fatalf("corrupt cache: stderr %q, output equal %v", stderr, got == want)
	}
	if got, stderr := discover("create an issue on github"); got != want || stderr != "" {
		t.Fatalf("the cache written again: stderr %q, output equal %v", stderr, got == want)
	}
}

// TestProgressLine drives the terminal progress line by a fake clock: it
// stays silent for the first second, is redrawn at most every 100 ms
// (the last step always), and is cleared only when it was shown.
func TestProgressLine(t *testing.T) {
	var out strings.Builder
	clock := time.Unix(0, 0)
	progress, clear := progressLine(&out, "toolgate discover", func() time.Time { return clock })
	progress(1, 10)
	clock = clock.Add(900 * time.Millisecond)
	progress(2, 10)
	clear()
	if out.String() != "" {
		t.Fatalf("wrote %q within the first second", out.String())
	}
	clock = clock.Add(200 * time.Millisecond)
	progress(5, 10)
	clock = clock.Add(10 * time.Millisecond)
	progress(6, 10) // too soon: skipped
	progress(10, 10)
	clear()
	want := "\r\033[Ktoolgate discover: indexing 50% (5 of 10 steps)" +
		"\r\033[Ktoolgate discover: indexing 100% (10 of 10 steps)" + "\r\033[K"
	if out.String() != want {
		t.Fatalf("wrote %q, want %q", out.String(), want)
	}
}

func TestNoticeLine(t *testing.T) {
	tests := []struct {
		name string
		fire bool // the second passes before the work is done
		want string
	}{
		{"slow", true, "\r\033[Ktoolgate discover: loading the catalog…\r\033[K"},
		{"fast", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			var pending func()
			cancelled := false
			done := noticeLine(&out, "toolgate discover", "loading the catalog", func(f func()) func() bool {
				pending = f
				return func() bool { cancelled = true; return !tt.fire }
			})
			if tt.fire {
				pending()
			}
			done()
			if !tt.fire {
				pending() // a timer that fires after done shows nothing
			}
			if out.String() != tt.want || !cancelled {
				t.Fatalf("wrote %q (cancelled %v), want %q", out.String(), cancelled, tt.want)
			}
		})
	}
}
