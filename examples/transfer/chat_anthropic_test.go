package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestChatAnthropicDeferred runs chat --backend anthropic against an
// httptest server speaking the Messages API: in native mode every tool
// alice may use is sent deferred (the refund tool, which she may not use,
// never), the step's shortlist arrives by tool references, and the model's
// call of a referenced tool goes through the gateway.
func TestChatAnthropicDeferred(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	replies := []string{
		`[{"type":"tool_use","id":"toolu_1","name":"get_balance","input":{"account":"ACC-00001"}}]|tool_use`,
		`[{"type":"text","text":"ACC-00001 holds 1000.00 USD."}]|end_turn`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(data))
		reply := `[{"type":"text","text":"done"}]|end_turn`
		if len(bodies) <= len(replies) {
			reply = replies[len(bodies)-1]
		}
		mu.Unlock()
		if r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "test-key" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`)
			return
		}
		content, stop, _ := strings.Cut(reply, "|")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":`+content+
			`,"stop_reason":"`+stop+`","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}`)
	}))
	defer srv.Close()
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")

	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "anthropic", "--once", "what is the balance of ACC-00001?")...)
	if code != 0 {
		t.Fatalf("chat exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.Contains(out, "call bank/get_balance") || !strings.Contains(out, "ACC-00001 holds 1000.00 USD.") {
		t.Errorf("chat output lacks the call or the answer:\n%s", out)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	for i, b := range bodies {
		var body struct {
			Tools []struct {
				Name  string `json:"name"`
				Defer bool   `json:"defer_loading"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(b), &body); err != nil {
			t.Fatal(err)
		}
		deferred := 0
		for _, tool := range body.Tools {
			if tool.Defer {
				deferred++
			}
		}
		if len(body.Tools) < 100 || deferred != len(body.Tools)-1 || body.Tools[0].Name != "find_tools" {
			t.Errorf("request %d: %d tools, %d deferred; want find_tools loaded and the 100+ others deferred", i, len(body.Tools), deferred)
		}
		if strings.Contains(b, "issue_full_refund") {
			t.Errorf("request %d names the refund tool alice may not use", i)
		}
	}
	if !strings.Contains(bodies[0], `"type":"tool_reference"`) {
		t.Error("the first request delivers no tool reference")
	}
}
