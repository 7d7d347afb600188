package livetest_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
)

// TestLiveToolsCompile checks the conformance run's setup without an
// engine: every tool loads, has a distinct model-facing name, and compiles
// to both constraints, so the live run can never shrink silently.
func TestLiveToolsCompile(t *testing.T) {
	ts := liveTools(t)
	if len(ts) < 100 {
		t.Fatalf("%d tools, want the transfer tools and the 105 of the real MCP catalogs", len(ts))
	}
	seen := map[string]string{}
	for _, tl := range ts {
		if !llm.ValidToolName(tl.name) {
			t.Errorf("%s: model name %q is not valid", tl.id, tl.name)
		}
		if other, dup := seen[tl.name]; dup {
			t.Errorf("%s and %s share the model name %q", tl.id, other, tl.name)
		}
		seen[tl.name] = tl.id
		env := []grammar.EnvelopeTool{{Name: tl.name, Schema: tl.schema}}
		if r, err := grammar.Envelope(env, nil); err != nil {
			t.Errorf("%s: grammar.Envelope: %v", tl.id, err)
		} else if len(r.Excluded) > 0 {
			t.Errorf("%s: grammar.Envelope excluded it: %v", tl.id, r.Excluded)
		}
		if _, _, err := grammar.EnvelopeSchema(env, nil); err != nil {
			t.Errorf("%s: grammar.EnvelopeSchema: %v", tl.id, err)
		}
	}
}

// TestPick: with N at half the tools, the two engines' picks cover every
// tool exactly once; with N above the count, every tool is taken in turn.
func TestPick(t *testing.T) {
	for row, count := range []int{108, 109, 7} {
		t.Run(fmt.Sprint(row), func(t *testing.T) {
			seen := make([]int, count)
			n := count / 2
			for half := range 2 {
				for i := range n {
					seen[pick(i, n, count, half)]++
				}
			}
			twice := 0
			for _, c := range seen {
				if c > 1 {
					twice++
				}
			}
			if twice > 0 || (count%2 == 0 && slices.Contains(seen, 0)) {
				t.Errorf("count %d, n %d: picks per tool %v, want each tool once", count, n, seen)
			}
			for i := range count + 3 {
				if got := pick(i, count+3, count, 0); got != i%count {
					t.Errorf("pick(%d, %d, %d, 0) = %d, want %d", i, count+3, count, got, i%count)
				}
			}
		})
	}
}
