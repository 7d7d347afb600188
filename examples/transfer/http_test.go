package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeContract drives `transfer serve` over HTTP through every status
// of docs/design.md's contract that the finance tools can produce.
func TestServeContract(t *testing.T) {
	srv := startServe(t, t.TempDir(), writeTokens(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 20 * time.Second}
	call := func(token, session string, step int, tool, args string) *reply {
		t.Helper()
		r, err := post(ctx, client, srv.base+"/v1/tools/call", token, callBody(session, step, tool, args))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expect := func(what string, r *reply, status int, errType string) {
		t.Helper()
		if r.status != status || r.ErrorType != errType {
			t.Fatalf("%s = %d %s (%s), want %d %s", what, r.status, r.ErrorType, r.Message, status, errType)
		}
	}
	transfer := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12.34}`

	expect("transfer without a bearer token", call("", "s", 0, "bank/transfer_funds", transfer), 401, "UNAUTHENTICATED")
	expect("transfer with an unknown token", call("nobody", "s", 0, "bank/transfer_funds", transfer), 401, "UNAUTHENTICATED")
	expect("bob (no billing:admin) refunds", call("bob-token", "s-bob", 0, "bank/issue_full_refund", `{"transaction_id":"TX-0123456789abcdef"}`),
		403, "PERMISSION_DENIED")
	expect("bob (no payments:write) transfers", call("bob-token", "s-bob", 1, "bank/transfer_funds", transfer), 403, "PERMISSION_DENIED")
	expect("unknown tool", call("alice-token", "s", 0, "bank/delete_everything", `{}`), 404, "UNKNOWN_TOOL")
	expect("bare name of a tool bob may not use", call("bob-token", "s-bob", 2, "transfer_funds", transfer), 404, "UNKNOWN_TOOL")
	if r := call("bob-token", "s-bob", 3, "get_balance", `{"account":"ACC-00009"}`); r.status != 200 {
		t.Fatalf("get_balance by its bare name = %d %s %s, want 200", r.status, r.ErrorType, r.Message)
	}

	// Discovery answers with the bearer's authorized tools only.
	discover := func(token, query string) (int, []string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.base+"/v1/discover", strings.NewReader(`{"query":`+strconv.Quote(query)+`,"k":3}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Candidates []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"input_schema"`
			} `json:"candidates"`
			Authorized int `json:"authorized"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("discover %q: %v", query, err)
		}
		var names []string
		for _, c := range out.Candidates {
			if len(c.InputSchema) == 0 {
				t.Errorf("discover %q: candidate %s without its input schema", query, c.Name)
			}
			names = append(names, c.Name)
		}
		return resp.StatusCode, names
	}
	if status, names := discover("alice-token", "send 50 dollars from my account to another account"); status != 200 || len(names) == 0 || names[0] != "bank/transfer_funds" {
		t.Errorf("discover(send money) as alice = %d %v, want bank/transfer_funds first", status, names)
	}
	for _, tok := range []string{"alice-token", "bob-token"} {
		t.Run(tok, func(t *testing.T) {
			status, names := discover(tok, "issue a full refund of a transaction")
			if status != 200 || slices.Contains(names, "bank/issue_full_refund") {
				t.Errorf("discover(refund) as %s = %d %v; the refund tool needs billing:admin", tok, status, names)
			}
		})
	}
	if status, names := discover("carol-token", "issue a full refund of a transaction"); status != 200 || !slices.Contains(names, "bank/issue_full_refund") {
		t.Errorf("discover(refund) as carol = %d %v, want bank/issue_full_refund", status, names)
	}

	// Validation: JSON pointers per violation; nothing executed.
	for _, tc := range []struct {
		name, args string
		pointers   []string
	}{
		{"same account, 3 decimals", `{"source_account":"ACC-00001","target_account":"ACC-00001","amount":1.005}`, []string{"/target_account", "/amount"}},
		{"bad account pattern", `{"source_account":"ACC-1","target_account":"ACC-00002","amount":1}`, []string{"/source_account"}},
		{"amount a string", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"5"}`, []string{"/amount"}},
		{"negative amount", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":-5}`, []string{"/amount"}},
		{"undeclared property", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5,"memo":"x"}`, []string{""}},
		{"missing amount", `{"source_account":"ACC-00001","target_account":"ACC-00002"}`, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call("alice-token", "s-valid", 0, "bank/transfer_funds", tc.args)
			expect(tc.name, r, 422, "VALIDATION_ERROR")
			var details []struct{ Pointer, Message string }
			if err := json.Unmarshal(r.Details, &details); err != nil {
				t.Fatalf("%s: details %s: %v", tc.name, r.Details, err)
			}
			for _, p := range tc.pointers {
				found := false
				for _, d := range details {
					found = found || d.Pointer == p || (p == "" && d.Message != "")
				}
				if !found {
					t.Errorf("%s: details %s lack pointer %q", tc.name, r.Details, p)
				}
			}
		})
	}

	// A transfer up to 1000.00 runs; the retry of its step is replayed.
	first := call("alice-token", "s-alice", 0, "bank/transfer_funds", transfer)
	again := call("alice-token", "s-alice", 0, "bank/transfer_funds", transfer)
	if first.status != 200 || first.Cached || again.status != 200 || !again.Cached || string(again.Result) != string(first.Result) {
		t.Fatalf("transfer then retry = %d cached=%v %s, %d cached=%v %s; want 200 fresh, then 200 cached with the same result",
			first.status, first.Cached, first.Result, again.status, again.Cached, again.Result)
	}
	expect("same step, other arguments", call("alice-token", "s-alice", 0, "bank/transfer_funds",
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":99}`), 422, "IDEMPOTENCY_MISMATCH")

	// Above 1000.00: 428, granted by a principal with approvals:grant, then the retry runs once.
	if r := call("alice-token", "s-alice", 1, "bank/transfer_funds", `{"source_account":"ACC-00003","target_account":"ACC-00001","amount":700}`); r.status != 200 {
		t.Fatalf("funding transfer = %d %s", r.status, r.Message)
	}
	big := `{"source_account":"ACC-00001","target_account":"ACC-00004","amount":1500.00}`
	r := call("alice-token", "s-alice", 2, "bank/transfer_funds", big)
	expect("transfer of 1500.00", r, 428, "CONFIRMATION_REQUIRED")
	if r.ApprovalID == "" {
		t.Fatal("428 without approval_id")
	}
	approve := func(token, id string) *reply {
		t.Helper()
		r, err := post(ctx, client, srv.base+"/v1/approvals/"+id, token, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expect("alice approves (no approvals:grant)", approve("alice-token", r.ApprovalID), 403, "PERMISSION_DENIED")
	expect("still unapproved", call("alice-token", "s-alice", 2, "bank/transfer_funds", big), 428, "CONFIRMATION_REQUIRED")
	if g := approve("carol-token", r.ApprovalID); g.status != 200 {
		t.Fatalf("carol approves = %d %s %s", g.status, g.ErrorType, g.Message)
	}
	done := call("alice-token", "s-alice", 2, "bank/transfer_funds", big)
	if done.status != 200 || done.Cached {
		t.Fatalf("approved transfer = %d %s cached=%v, want 200 fresh", done.status, done.Message, done.Cached)
	}
	if again := call("alice-token", "s-alice", 2, "bank/transfer_funds", big); again.status != 200 || !again.Cached {
		t.Fatalf("approved transfer retried = %d cached=%v, want 200 cached", again.status, again.Cached)
	}
	var bigTx struct {
		ID string `json:"transaction_id"`
	}
	json.Unmarshal(done.Result, &bigTx)

	// Insufficient funds is a domain error, recorded and replayed.
	dry := `{"source_account":"ACC-00003","target_account":"ACC-00005","amount":400.01}` // ACC-00003 holds 300.00
	r = call("alice-token", "s-alice", 3, "bank/transfer_funds", dry)
	expect("transfer beyond the balance", r, 422, "DOMAIN_ERROR")
	if r.Code != "INSUFFICIENT_FUNDS" || r.Cached {
		t.Fatalf("insufficient funds = code %q cached=%v, want INSUFFICIENT_FUNDS fresh", r.Code, r.Cached)
	}
	r = call("alice-token", "s-alice", 3, "bank/transfer_funds", dry)
	if r.status != 422 || r.Code != "INSUFFICIENT_FUNDS" || !r.Cached {
		t.Fatalf("insufficient funds retried = %d %q cached=%v, want 422 INSUFFICIENT_FUNDS cached", r.status, r.Code, r.Cached)
	}

	// A refund always needs an approval, and the requester cannot grant its own.
	refund := `{"transaction_id":"` + bigTx.ID + `"}`
	r = call("carol-token", "s-carol", 0, "bank/issue_full_refund", refund)
	expect("refund", r, 428, "CONFIRMATION_REQUIRED")
	expect("carol approves her own refund", approve("carol-token", r.ApprovalID), 403, "PERMISSION_DENIED")
	if g := approve("dave-token", r.ApprovalID); g.status != 200 {
		t.Fatalf("dave approves = %d %s", g.status, g.Message)
	}
	if r := call("carol-token", "s-carol", 0, "bank/issue_full_refund", refund); r.status != 200 {
		t.Fatalf("approved refund = %d %s %s", r.status, r.ErrorType, r.Message)
	}

	// Balances: ACC-00001 1000 - 12.34 + 700 - 1500 + 1500 (refunded) = 1687.66.
	step := 0
	for acc, want := range map[string]string{"ACC-00001": "1687.66", "ACC-00003": "300.00", "ACC-00004": "1000.00"} {
		t.Run(acc, func(t *testing.T) {
			step++
			r := call("bob-token", "s-bob-read", step, "bank/get_balance", `{"account":"`+acc+`"}`)
			var got struct {
				Balance json.Number `json:"balance"`
			}
			json.Unmarshal(r.Result, &got)
			if r.status != 200 || got.Balance.String() != want {
				t.Errorf("get_balance(%s) = %d %s, want %s", acc, r.status, r.Result, want)
			}
		})
	}

	// The history, newest first: the refund, then the approved transfer.
	r = call("bob-token", "s-bob-read", 10, "bank/list_transactions", `{"account":"ACC-00001","limit":2}`)
	var hist struct {
		Transactions []struct {
			ID       string `json:"transaction_id"`
			Kind     string `json:"kind"`
			RefundOf string `json:"refund_of"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(r.Result, &hist); err != nil || r.status != 200 || len(hist.Transactions) != 2 ||
		hist.Transactions[0].Kind != "refund" || hist.Transactions[0].RefundOf != bigTx.ID || hist.Transactions[1].ID != bigTx.ID {
		t.Errorf("list_transactions(ACC-00001, 2) = %d %s, want [refund of %s, %s]", r.status, r.Result, bigTx.ID, bigTx.ID)
	}

	// Oversized and malformed bodies, /metrics.
	resp, err := client.Post(srv.base+"/v1/tools/call", "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), 2<<20)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 && resp.StatusCode != 401 {
		t.Errorf("2 MiB body = %d, want 413 (or 401 before reading it)", resp.StatusCode)
	}
	r, err = post(ctx, client, srv.base+"/v1/tools/call", "alice-token", `{"session_id":"s","step":`)
	if err != nil {
		t.Fatal(err)
	}
	expect("malformed JSON body", r, 422, "VALIDATION_ERROR")
	resp, err = client.Get(srv.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "toolgate_gateway_calls_total") {
		t.Errorf("/metrics = %d without toolgate_gateway_calls_total", resp.StatusCode)
	}
	srv.stop(t)
}
