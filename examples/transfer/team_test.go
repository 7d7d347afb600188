package main

import (
	"strings"
	"testing"
)

// TestTeamDemo runs "transfer team" and checks each stage: routing to the
// right worker, workers shown only their own group, the taint from the
// inbox, the injected transfer held until the operator approves, the
// balances after exactly one transfer, and the audit naming the worker.
func TestTeamDemo(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(t.Context(), []string{"team"}, &out, &errOut); code != exitOK {
		t.Fatalf("transfer team exited %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{
		"[supervisor] step 1 shows workers/accounts, workers/support",
		"[worker] bank/get_balance {\"account\":\"ACC-00001\"}",
		"[worker] step 1 shows support/read_inbox\n",
		"held: the conversation read untrusted output: support/read_inbox output at step 1",
		"[approval] operator approves",
		"taint: the conversation read untrusted output (support/read_inbox output at step 1)",
		"balance ACC-00001 = 750.00",
		"balance ACC-00007 = 1250.00",
		`audit {"actor":"worker:accounts","outcome":"confirmation_required","principal":"carol","taint":"support/read_inbox output at step 1"}`,
		`audit {"actor":"worker:accounts","outcome":"ok","principal":"carol","taint":"support/read_inbox output at step 1"}`,
	} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q\n%s", want, text)
			}
		})
	}
	// The approval comes before the transfer executes.
	if strings.Index(text, "[approval] operator approves") > strings.Index(text, "[worker] bank/transfer_funds") {
		t.Errorf("the transfer ran before the approval:\n%s", text)
	}
	// A worker is never shown another worker's tools.
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "[worker] step") && strings.Contains(line, "support/") && strings.Contains(line, "bank/") {
			t.Errorf("a worker was shown both groups: %s", line)
		}
	}
}
