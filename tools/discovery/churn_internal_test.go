package discovery

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/toolgate/toolgate/tools"
)

// TestNamespaceChurnKeepsNoOldCards: a server that re-lists its tools
// again and again (list_changed), each time with words never seen
// before, does not grow the heap of the index that follows it: the cards
// it replaced, and the shared chunks they were cut from, are freed or
// reused, and the per-word caches are bounded. Measured: flat to the
// kilobyte over 60 re-listings of 1,000 tools' largest server; keeping
// the replaced cards grew it 430 KB a re-listing.
func TestNamespaceChurnKeepsNoOldCards(t *testing.T) {
	ts, reg, d := indexedBig(t, 1000)
	ctx := context.Background()
	// The largest server re-lists.
	byNS := map[string][]tools.Tool{}
	ns := ""
	for _, tool := range reg.Snapshot().Tools() {
		n := tool.Namespace()
		byNS[n] = append(byNS[n], *tool)
		if len(byNS[n]) > len(byNS[ns]) {
			ns = n
		}
	}
	listed := byNS[ns]
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const relistings = 60
	var first uint64
	for i := 1; i <= relistings; i++ {
		next := make([]tools.Tool, len(listed))
		for j, tool := range listed {
			tool.Description += fmt.Sprintf(" Revision r%dx%d of this text.", i, j)
			next[j] = tool
		}
		if err := reg.ReplaceNamespace(ns, next); err != nil {
			t.Fatal(err)
		}
		x, err := d.Index(ctx, reg.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := x.Stats().Reused, len(ts)-len(listed); got < want*99/100 {
			t.Fatalf("re-listing %d: reused %d cards, want about %d", i, got, want)
		}
		if i == 1 {
			first = heap()
		}
	}
	if last := heap(); last > first+2<<20 {
		t.Errorf("heap after %d re-listings of %d tools: %d KB, after the first %d KB; want at most 2 MB more",
			relistings, len(listed), last>>10, first>>10)
	}
}
