package catalog

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/internal/cputime"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
)

// BenchmarkLoadCatalog loads the eight real MCP catalogs (105 tools, every
// input schema compiled): the cost of starting up or of an upstream's
// list_changed.
func BenchmarkLoadCatalog(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(b), "examples/transfer/catalog/*.json"))
	b.ReportAllocs()
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		n = 0
		for _, f := range files {
			ts, err := Load(f, fileNamespace(f))
			if err != nil {
				b.Fatal(err)
			}
			n += len(ts)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tool")
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N*n), "cpu-ns/tool")
}

// BenchmarkParseSize parses pretty-printed JSON arrays of n small tools:
// cpu-ns/tool stays flat as n grows (line numbers are counted incrementally,
// once over the file, not from the start for every element).
func BenchmarkParseSize(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		var sb strings.Builder
		sb.WriteString("[\n")
		for i := range n {
			if i > 0 {
				sb.WriteString(",\n")
			}
			fmt.Fprintf(&sb, "  {\n    \"name\": \"tool_%d\",\n    \"description\": \"Do thing %d.\"\n  }", i, i)
		}
		sb.WriteString("\n]\n")
		data := sb.String()
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			cpu0 := cputime.Process()
			for b.Loop() {
				ts, err := Parse(strings.NewReader(data), "big.json", "ns")
				if err != nil || len(ts) != n {
					b.Fatalf("Parse = %d tools, %v", len(ts), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tool")
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N*n), "cpu-ns/tool")
		})
	}
}

// BenchmarkParseDeepSchema parses one tool whose input schema nests as
// deep as [tools.MaxSchemaDepth] allows: the most a schema's depth can cost
// (compiling costs time quadratic in depth inside the JSON Schema library).
func BenchmarkParseDeepSchema(b *testing.B) {
	levels := (tools.MaxSchemaDepth - 1) / 2 // each level is {"properties":{"a":…}}, 2 deep
	schema := strings.Repeat(`{"type":"object","properties":{"a":`, levels) + "{}" + strings.Repeat("}}", levels)
	line := `{"name":"deep","inputSchema":` + schema + "}\n"
	for b.Loop() {
		if _, err := Parse(strings.NewReader(line), "deep.jsonl", "ns"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadBig parses a synthetic JSON Lines catalog of 10,000 tools
// (internal/bigcatalog: copies of the real catalogs' tools, whose input
// schemas repeat as a server's do across namespaces), and the same with
// every schema made distinct by a "$comment", so that each is compiled:
// the cost of a catalog whose schemas never repeat.
func BenchmarkLoadBig(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(b), "examples/transfer/catalog/*.json"))
	base, err := LoadAll(files...)
	if err != nil {
		b.Fatal(err)
	}
	ptrs := make([]*tools.Tool, len(base))
	for i := range base {
		ptrs[i] = &base[i]
	}
	const n = 10000
	var buf bytes.Buffer
	if err := bigcatalog.WriteJSONL(&buf, ptrs, n, false); err != nil {
		b.Fatal(err)
	}
	repeated := buf.Bytes()
	var distinct []byte
	for i, line := range bytes.SplitAfter(repeated, []byte("\n")) {
		distinct = append(distinct, bytes.Replace(line, []byte(`"inputSchema":{`), fmt.Appendf(nil, `"inputSchema":{"$comment":"%d",`, i), 1)...)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"schemas=repeated", repeated}, {"schemas=distinct", distinct}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				ts, err := Parse(bytes.NewReader(c.data), "big.jsonl", "big")
				if err != nil || len(ts) != n {
					b.Fatalf("Parse = %d tools, %v", len(ts), err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N*n), "cpu-ns/tool")
		})
	}
}
