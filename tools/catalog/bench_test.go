package catalog

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// BenchmarkLoadCatalog loads the eight real MCP catalogs (105 tools, every
// input schema compiled): the cost of starting up or of an upstream's
// list_changed.
func BenchmarkLoadCatalog(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(b), "examples/transfer/catalog/*.json"))
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime()
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
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/tool")
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
