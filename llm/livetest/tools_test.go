package livetest_test

import (
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
