package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestDemo runs the guided demo in-process and checks each stage of its
// output: the catalog, discovery, the constraint, the transfer, the replay,
// the refusal, the approval and the balances.
func TestDemo(t *testing.T) {
	code, text, errOut := runArgs()
	if code != exitOK {
		t.Fatalf("run() = %d, want 0; stderr: %s\nstdout:\n%s", code, errOut, text)
	}
	stage := func(n int) string {
		start := strings.Index(text, "\n== "+string(rune('0'+n))+". ")
		if start < 0 {
			t.Fatalf("the demo has no stage %d:\n%s", n, text)
		}
		rest := text[start+1:]
		if end := strings.Index(rest, "\n== "); end >= 0 {
			return rest[:end]
		}
		return rest
	}
	checks := []struct {
		stage int
		want  []string // substrings, or regexps when they start with ^
	}{
		{1, []string{"Registry: 109 tools = 4 finance tools (bank/*) + 105 tools from 8 real MCP servers",
			"Authorized: 108 of 109 tools", "bank/issue_full_refund (needs billing:admin)",
			"ACC-00001 1000.00, ACC-00002 1000.00"}},
		{2, []string{"Strategy: progressive", "1. bank/transfer_funds",
			`^Tokens of tool definitions sent: \d+ \(the shortlist\) instead of \d+ \(all 108 authorized tools\): 9\d\.\d% saved`}},
		{3, []string{`^GBNF grammar from grammar.Envelope for the shortlist: \d+ bytes, \d+ rules`,
			`root ::= "{" ws "\"action\""`, `"\"transfer_funds\""`, "JSON-Schema `format`"}},
		{4, []string{`Model (step 1): call transfer_funds {"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.00}`,
			`^Gateway: executed bank/transfer_funds, cached: false; idempotency key [0-9a-f]{16}…`,
			`^Result: \{"amount":250.00,"transaction_id":"TX-[0-9a-f]{16}"\}`,
			"Ledger after: ACC-00001 750.00, ACC-00002 1250.00", "transfer_funds handler executions: 1."}},
		{5, []string{"Gateway: replayed bank/transfer_funds, cached: true",
			"ACC-00001 750.00, ACC-00002 1250.00, ACC-00003 1000.00, ACC-00004 1000.00 USD (unchanged)",
			"handler executions: 1 before the retry, 1 after"}},
		{6, []string{`"tool":"issue_full_refund"`, "Runtime: rejected (unknown_tool), nothing sent to the gateway",
			`"problem":"unknown_tool"`, "0 list it as a tool",
			"PERMISSION_DENIED (HTTP 403)", "issue_full_refund handler executions 0; ledger transactions 1 before, 1 after"}},
		{7, []string{"CONFIRMATION_REQUIRED", "bob (scope approvals:grant) approves bank/transfer_funds",
			"approved=true", "Gateway: executed bank/transfer_funds, cached: false"}},
		{8, []string{"ACC-00001 750.00, ACC-00002 50.00, ACC-00003 2200.00, ACC-00004 1000.00 USD; 2 transactions",
			"transfer_funds ran 2 times", "issue_full_refund ran 0 times"}},
	}
	for i, c := range checks {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := stage(c.stage)
			for _, want := range c.want {
				var ok bool
				if strings.HasPrefix(want, "^") {
					ok = regexp.MustCompile("(?m)" + want).MatchString(s)
				} else {
					ok = strings.Contains(s, want)
				}
				if !ok {
					t.Errorf("stage %d lacks %q:\n%s", c.stage, want, s)
				}
			}
		})
	}
	// The shortlist stage lists scores; the retry stage never shows a new key.
	if !regexp.MustCompile(`(?m)^  1\. bank/transfer_funds +[01]\.\d{3}  \(`).MatchString(stage(2)) {
		t.Errorf("the shortlist has no scores:\n%s", stage(2))
	}
	if strings.Contains(stage(5), "cached: false") {
		t.Errorf("the retried step executed again:\n%s", stage(5))
	}
}

// TestDemoIsDeterministic runs the demo twice: the output (keys, IDs,
// scores, token counts) is the same, so a reader can diff runs.
func TestDemoIsDeterministic(t *testing.T) {
	codeA, a, errA := runArgs()
	codeB, b, errB := runArgs()
	if codeA != exitOK || codeB != exitOK {
		t.Fatalf("demo failed: %s%s", errA, errB)
	}
	if a != b {
		t.Errorf("two runs differ:\n%s\n---\n%s", a, b)
	}
}
