package discovery_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
)

// heldoutTestSHA256 pins testdata/heldout/queries/test.jsonl. The test split
// is never tuned on: no lexicon entry, weight or rule is chosen by reading
// its requests or its misses (testdata/heldout/README.md). If this fails the
// frozen split was edited; restore it. A new test split is a new file, a new
// pin and a new commit recorded in docs/discovery.md.
const heldoutTestSHA256 = "0ba60a0e87d3d4c4af1bcb57c2cf9caac79b21ce1d79f5db320f18c01df1a335"

func TestHeldoutTestSplitFrozen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "heldout", "queries", "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != heldoutTestSHA256 {
		t.Fatalf("testdata/heldout/queries/test.jsonl has sha256 %s, want the frozen %s: the held-out test split must not change", got, heldoutTestSHA256)
	}
}

// heldout loads the twelve held-out MCP catalogs (testdata/heldout) with
// one of its query splits, "dev" or "test".
func heldout(tb testing.TB, split string) dataset {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "heldout", "catalogs", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no held-out catalogs in testdata/heldout/catalogs (%v)", err)
	}
	return dataset{
		name:    "heldout-" + split,
		snap:    catalogtest.Snapshot(tb, files...),
		queries: readQueries(tb, filepath.Join("testdata", "heldout", "queries", split+".jsonl")),
	}
}
