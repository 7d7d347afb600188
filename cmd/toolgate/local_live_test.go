package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestLiveLocalBackend runs eval's reformulation and cards suggest through
// --backend local on the live GGUF model and llama.cpp's library
// (TOOLGATE_LIVE_LOCAL_MODEL, TOOLGATE_LIVE_LIBLLAMA), on a two-tool
// catalog. It asserts the plumbing: the model was called (every rewrite
// counted, whatever its outcome), and each suggestion was either written
// (valid: [cards.Load] reads it) or reported as failed, never a crash.
func TestLiveLocalBackend(t *testing.T) {
	lib, model := testenv.LocalModel(t)
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}
{"name":"refund_order","description":"Refund a customer's order"}
`)
	t.Run("eval", func(t *testing.T) {
		qs := writeFile(t, "q.jsonl", `{"query":"show what I bought","relevant":["list_orders"]}`+"\n")
		code, out, errOut := runCmd("eval", "--tools", cat, "--queries", qs, "--format", "json",
			"--backend", "local", "--model", model, "--library", lib, "--reformulate-below", "1", "--reformulate-timeout", "5m")
		t.Logf("stderr: %s", errOut)
		if code != exitOK {
			t.Fatalf("eval --backend local: exit %d", code)
		}
		var rep discovery.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Queries != 1 {
			t.Errorf("eval --backend local = %s (%v)", out, err)
		}
		if !strings.Contains(errOut, "1 model calls") {
			t.Errorf("stderr does not count the one model call")
		}
	})
	t.Run("cards suggest", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "shop.cards.jsonl")
		code, _, errOut := runCmd("cards", "suggest", "--tools", cat, "--backend", "local", "--model", model, "--library", lib, "--out", out)
		t.Logf("stderr: %s", errOut)
		if code != exitOK && code != exitNegative {
			t.Fatalf("cards suggest --backend local: exit %d", code)
		}
		ov, err := cards.Load(out)
		if err != nil {
			t.Fatalf("the suggested overlay does not load: %v", err)
		}
		if ov.Len() == 0 && code == exitOK {
			t.Errorf("exit 0 with no entry written")
		}
		t.Logf("%d entries written", ov.Len())
	})
}
