package cards_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
)

func tool(id, desc, schema string) tools.Tool {
	t := tools.Tool{ID: id, Description: desc}
	t.Card.Name = t.Name()
	t.Card.Summary = desc
	if schema != "" {
		t.InputSchema = json.RawMessage(schema)
	}
	return t
}

func catalog() []tools.Tool {
	return []tools.Tool{
		tool("github/create_pull_request", "Create a new pull request", `{"type":"object","properties":{"title":{"type":"string"},"head":{"type":"string"}}}`),
		tool("github/list_issues", "List issues", ""),
		tool("k8s/get_pods", "List pods", `{"type":"object"}`),
		tool("k8s/delete_pod", "Delete a pod", `{"type":"object"}`),
	}
}

func TestHash(t *testing.T) {
	a := tool("github/create_pull_request", "Create a new pull request", `{"type":"object","properties":{"title":{"type":"string"},"head":{"type":"string"}}}`)
	reordered := tool("github/create_pull_request", "Create a new pull request", `{ "properties": {"head":{"type":"string"},"title":{"type":"string"}}, "type":"object"}`)
	if cards.Hash(&a) != cards.Hash(&reordered) {
		t.Errorf("Hash differs for the same schema with other key order and spacing")
	}
	overlaid := a
	overlaid.Card.Aliases = []string{"open a PR"}
	overlaid.Card.NotFor = "merging"
	overlaid.Card.Examples = []string{"open a pull request"}
	if cards.Hash(&a) != cards.Hash(&overlaid) {
		t.Errorf("Hash changed when only overlay fields changed")
	}
	for i, change := range []tools.Tool{
		tool("github/create_pull_request", "Create a new draft pull request", string(a.InputSchema)),
		tool("github/create_pull_request", "Create a new pull request", `{"type":"object","properties":{"title":{"type":"string"}}}`),
		tool("github/open_pull_request", "Create a new pull request", string(a.InputSchema)),
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if cards.Hash(&a) == cards.Hash(&change) {
				t.Errorf("Hash(%s %q) equals the original's: a change of name, description or schema must change it", change.ID, change.Description)
			}
		})
	}
	// Length prefixes: moving text between name and description changes the hash.
	x, y := tool("a/ab", "c", ""), tool("a/a", "bc", "")
	if cards.Hash(&x) == cards.Hash(&y) {
		t.Errorf("Hash is ambiguous across part boundaries")
	}
	if h := cards.Hash(&a); !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+16 {
		t.Errorf("Hash = %q, want sha256:<16 hex>", h)
	}
}

func entryLine(e cards.Entry) string {
	b, _ := json.Marshal(e)
	return string(b)
}

func TestApply(t *testing.T) {
	ts := catalog()
	pr := ts[0]
	src := strings.Join([]string{
		entryLine(cards.Entry{Tool: pr.ID, Hash: cards.Hash(&pr), Aliases: []string{"open a PR", "Create a new pull request"},
			Examples: []string{"open a pull request for my branch"}, NotFor: "merging: use github/merge_pull_request", Tags: []string{"review"}}),
		`{"tool":"k8s/*","aliases":["kubernetes","the cluster"],"tags":["ops"]}`,
		`# a comment`,
		``,
		entryLine(cards.Entry{Tool: "github/list_issues", Hash: "sha256:0123456789abcdef", Aliases: []string{"bugs"}}),
		entryLine(cards.Entry{Tool: "jira/create_issue", Hash: "sha256:0123456789abcdef", Aliases: []string{"ticket"}}),
		`{"tool":"confluence/*","aliases":["the wiki"]}`,
	}, "\n")
	ov, err := cards.Parse(strings.NewReader(src), "team.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	before := catalog()
	out, rep := ov.Apply(ts)
	if !reflect.DeepEqual(ts, before) {
		t.Fatalf("Apply modified its input")
	}
	got := out[0].Card
	if want := []string{"open a PR", "Create a new pull request"}; !reflect.DeepEqual(got.Aliases, want) {
		t.Errorf("aliases = %q, want %q", got.Aliases, want)
	}
	if want := []string{"open a pull request for my branch"}; !reflect.DeepEqual(got.Examples, want) {
		t.Errorf("examples = %q, want %q", got.Examples, want)
	}
	if got.NotFor != "merging: use github/merge_pull_request" || !reflect.DeepEqual(got.Tags, []string{"review"}) {
		t.Errorf("not_for, tags = %q, %q", got.NotFor, got.Tags)
	}
	for row, i := range []int{2, 3} {
		t.Run(fmt.Sprint(row), func(t *testing.T) {
			if want := []string{"kubernetes", "the cluster", "ops"}; !reflect.DeepEqual(out[i].Card.Tags, want) {
				t.Errorf("%s tags = %q, want the server's aliases and tags %q", out[i].ID, out[i].Card.Tags, want)
			}
		})
	}
	if len(out[1].Card.Aliases) != 0 {
		t.Errorf("stale entry applied: %s aliases %q", out[1].ID, out[1].Card.Aliases)
	}
	if want := []string{"github/create_pull_request", "k8s/delete_pod", "k8s/get_pods"}; !reflect.DeepEqual(rep.Changed, want) {
		t.Errorf("Changed = %q, want %q", rep.Changed, want)
	}
	if len(rep.Stale) != 1 || rep.Stale[0].Entry.Tool != "github/list_issues" || rep.Stale[0].Hash != cards.Hash(&ts[1]) {
		t.Fatalf("Stale = %+v, want github/list_issues with its current hash", rep.Stale)
	}
	if s := rep.Stale[0].String(); !strings.HasPrefix(s, "team.jsonl:5: github/list_issues: stale entry not applied") {
		t.Errorf("stale problem reads %q", s)
	}
	var unknown []string
	for _, p := range rep.Unknown {
		unknown = append(unknown, p.Entry.Tool)
	}
	if want := []string{"jira/create_issue", "confluence/*"}; !reflect.DeepEqual(unknown, want) {
		t.Errorf("Unknown = %q, want %q", unknown, want)
	}
	if n := len(rep.Problems()); n != 3 {
		t.Errorf("Problems() has %d, want 3", n)
	}
	// Applying again changes nothing: the overlay is idempotent.
	again, rep2 := ov.Apply(out)
	if !reflect.DeepEqual(again, out) || len(rep2.Changed) != 0 {
		t.Errorf("second Apply changed %q", rep2.Changed)
	}
	// The overlaid tools are valid registry tools.
	reg := tools.NewRegistry()
	if err := reg.Add(out...); err != nil {
		t.Fatal(err)
	}
	if rep := ov.Check(reg.Snapshot()); len(rep.Stale) != 1 || len(rep.Unknown) != 2 {
		t.Errorf("Check: %d stale, %d unknown; want 1 and 2", len(rep.Stale), len(rep.Unknown))
	}
}

func TestParseErrors(t *testing.T) {
	ok := `{"tool":"a/b","hash":"sha256:0123456789abcdef","aliases":["x"]}`
	for _, tc := range []struct {
		name, src, want string
	}{
		{"not JSON", `{"tool":`, "f:1: invalid entry"},
		{"two values", ok + ` {}`, "f:1: more than one JSON value"},
		{"unknown field", `{"tool":"a/b","hash":"sha256:0123456789abcdef","alias":["x"]}`, `f:1: invalid entry: unknown field "alias"`},
		{"wrong type", `{"tool":"a/b","hash":"sha256:0123456789abcdef","aliases":"x"}`, `f:1: field "aliases": want an array of strings, got JSON string`},
		{"no tool", `{"aliases":["x"]}`, `f:1: missing "tool"`},
		{"bad ID", `{"tool":"nobody","hash":"sha256:0123456789abcdef","aliases":["x"]}`, `f:1: tool "nobody" is not a tool ID`},
		{"bad namespace", `{"tool":"bad ns/*","aliases":["x"]}`, `f:1: tool "bad ns/*": namespace must match`},
		{"no hash", `{"tool":"a/b","aliases":["x"]}`, `f:1: tool "a/b": missing "hash"`},
		{"bad hash", `{"tool":"a/b","hash":"md5:1","aliases":["x"]}`, `f:1: tool "a/b": hash "md5:1" must match`},
		{"namespace hash", `{"tool":"a/*","hash":"sha256:0123456789abcdef","aliases":["x"]}`, `f:1: tool "a/*": a namespace entry has no hash`},
		{"namespace not_for", `{"tool":"a/*","not_for":"x"}`, `f:1: tool "a/*": a namespace entry takes only aliases and tags`},
		{"empty entry", `{"tool":"a/*"}`, `f:1: tool "a/*": the entry adds nothing`},
		{"empty entry after an unfilled one", `{"tool":"a/b","hash":"sha256:0123456789abcdef"}` + "\n" + `{"tool":"a/*"}`, `f:2: tool "a/*": the entry adds nothing`},
		{"empty alias", `{"tool":"a/*","aliases":["x"," "]}`, `f:1: aliases[1]: empty`},
		{"control", `{"tool":"a/*","tags":["a\u0007"]}`, `f:1: tags[0]: contains control characters`},
		{"long text", `{"tool":"a/*","aliases":["` + strings.Repeat("x", cards.MaxText+1) + `"]}`, `f:1: aliases[0]: 301 bytes, at most 300`},
		{"long list", `{"tool":"a/*","tags":[` + strings.Repeat(`"t",`, cards.MaxList) + `"t"]}`, `f:1: tags: 65 entries, at most 64`},
		{"duplicate", ok + "\n\n" + ok, `f:3: duplicate entry for "a/b" (first at f:1)`},
		{"duplicate namespace", `{"tool":"a/*","tags":["x"]}` + "\n" + `{"tool":"a/*","tags":["y"]}`, `f:2: duplicate entry for "a/*" (first at f:1)`},
		{"long line", `{"tool":"a/*","tags":["` + strings.Repeat("x", cards.MaxLineBytes) + `"]}`, "f:1: line longer than 65536 bytes"},
		{"later line", ok + "\n" + `[]`, "f:2: invalid entry"},
		{"duplicate member", `{"tool":"a/b","hash":"sha256:0123456789abcdef","hash":"sha256:fedcba9876543210","aliases":["x"]}`, `f:1: invalid entry: duplicate member name "hash"`},
		{"not UTF-8", ok + "\n" + `{"tool":"a/*","aliases":["gh` + "\xff" + `"]}`, "f:2: not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cards.Parse(strings.NewReader(tc.src), "f")
			var ce *cards.Error
			if !errors.As(err, &ce) {
				t.Errorf("%s: Parse error = %v, want a *cards.Error", tc.name, err)
				return
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("%s: Parse error = %q, want prefix %q", tc.name, err, tc.want)
			}
		})
	}
}

// A file saved by a Windows editor (a byte order mark, CRLF line ends)
// reads like any other.
func TestParseAcceptsBOMAndCRLF(t *testing.T) {
	src := "\xef\xbb\xbf" + `{"tool":"a/*","aliases":["x"]}` + "\r\n" + `{"tool":"a/b","hash":"sha256:0123456789abcdef","aliases":["y"]}` + "\r\n"
	ov, err := cards.Parse(strings.NewReader(src), "f")
	if err != nil || ov.Len() != 2 {
		t.Fatalf("Parse(BOM, CRLF) = %d entries, %v; want 2", ov.Len(), err)
	}
	if e := ov.Entries()[1]; e.Line != 2 || e.Aliases[0] != "y" {
		t.Errorf("Parse(BOM, CRLF): second entry %+v, want line 2 with alias y", e)
	}
}

// TestParseSkipsUnfilledLines: a line as cards hash prints it (tool and
// hash only) applies nothing and is not an entry, even beside the filled
// copy of the same tool's line.
func TestParseSkipsUnfilledLines(t *testing.T) {
	src := `{"tool":"a/b","hash":"sha256:0123456789abcdef"}` + "\n" +
		`{"tool":"a/c","hash":"sha256:0123456789abcdef"}` + "\n" +
		`{"tool":"a/b","hash":"sha256:0123456789abcdef","aliases":["y"]}` + "\n"
	ov, err := cards.Parse(strings.NewReader(src), "f")
	if err != nil || ov.Len() != 1 {
		t.Fatalf("Parse(two unfilled lines, one filled) = %d entries, %v; want 1", ov.Len(), err)
	}
	if e := ov.Entries()[0]; e.Tool != "a/b" || e.Line != 3 {
		t.Errorf("Parse: entry %+v, want a/b of line 3", e)
	}
}

func TestLoadRefusesDuplicatesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	os.WriteFile(a, []byte(`{"tool":"k8s/*","aliases":["k8s"]}`+"\n"), 0o600)
	os.WriteFile(b, []byte("\n"+`{"tool":"k8s/*","aliases":["kube"]}`+"\n"), 0o600)
	_, err := cards.Load(a, b)
	if err == nil || err.Error() != b+`:2: duplicate entry for "k8s/*" (first at `+a+`:1); a key has one entry across the files: merge the two` {
		t.Fatalf("Load(a, b) error = %v, want the duplicate in b named with its first place", err)
	}
	if _, err := cards.Load(filepath.Join(dir, "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl: no such file") {
		t.Errorf("Load(missing) error = %v", err)
	}
	ov, err := cards.Load(a)
	if err != nil || ov.Len() != 1 {
		t.Fatalf("Load(a) = %v entries, %v", ov.Len(), err)
	}
}

func TestWriteParsesBack(t *testing.T) {
	entries := []cards.Entry{
		{Tool: "k8s/*", Aliases: []string{"kubernetes"}},
		{Tool: "github/create_pull_request", Hash: "sha256:0123456789abcdef", Aliases: []string{"open a <PR> & more"}, Examples: []string{"open a pull request"}},
	}
	var sb strings.Builder
	if err := cards.Write(&sb, entries); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sb.String(), `{"tool":"github/create_pull_request"`) || !strings.Contains(sb.String(), "<PR> & more") {
		t.Errorf("Write output not sorted by key or HTML-escaped:\n%s", sb.String())
	}
	ov, err := cards.Parse(strings.NewReader(sb.String()), "out")
	if err != nil {
		t.Fatal(err)
	}
	if ov.Len() != 2 || ov.Entries()[1].Tool != "k8s/*" {
		t.Errorf("parsed back %d entries", ov.Len())
	}
	if _, err := cards.New([]cards.Entry{{Tool: "a/b", Aliases: []string{"x"}}}); err == nil {
		t.Errorf("New accepted a tool entry without a hash")
	}
}

// commentReader serves "#...\n" lines up to size bytes, counting what it
// served.
type commentReader struct{ left, served int64 }

func (r *commentReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.left))
	for i := range n {
		p[i] = '#'
		if i%64 == 63 {
			p[i] = '\n'
		}
	}
	r.left -= int64(n)
	r.served += int64(n)
	return n, nil
}

// A huge overlay costs no more than reading MaxBytes, whatever it holds:
// comments and blank lines count too.
func TestParseStopsPastMaxBytes(t *testing.T) {
	r := &commentReader{left: 4 * cards.MaxBytes}
	_, err := cards.Parse(r, "huge.jsonl")
	if err == nil || !strings.Contains(err.Error(), "overlays larger than 64 MiB in all") {
		t.Errorf("Parse(4×MaxBytes of comments) error = %v, want the size limit", err)
	}
	if r.served > cards.MaxBytes+2*cards.MaxLineBytes {
		t.Errorf("Parse read %d bytes, want at most MaxBytes and a buffer", r.served)
	}
	ok := &commentReader{left: cards.MaxBytes}
	if _, err := cards.Parse(ok, "big.jsonl"); err != nil {
		t.Errorf("Parse(MaxBytes of comments) error = %v, want none", err)
	}
}
