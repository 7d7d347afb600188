package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// crashedClaim leaves alice's slot (s1, step 1, bank/transfer_funds, okArgs)
// claimed by a gateway that died before recording anything, its lease
// expired on e's clock: what a crash between claim and record leaves.
func crashedClaim(t *testing.T, e *env) string {
	t.Helper()
	canon := []byte(`{"amount":250.5,"source_account":"ACC-00001","target_account":"ACC-00002"}`)
	key := gateway.DeriveKey("acme", "alice", "s1", 1, "bank/transfer_funds", canon)
	now := e.Clock.Now()
	_, err := e.Store.Claim(context.Background(), store.ClaimRequest{
		Slot:      store.Slot{Tenant: "acme", Principal: "alice", SessionID: "s1", Step: 1, Tool: "bank/transfer_funds"},
		Principal: "alice", Key: key, Fingerprint: fmt.Sprintf("%x", sha256.Sum256(canon)), Now: now,
		LeaseExpires: now.Add(time.Minute), ExpiresAt: now.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(2 * time.Minute)
	return key
}

// After a crash the HTTP answer says so: the re-run's 200 carries
// "attempts": 2 and "previous_attempt_uncertain": true (after the
// contract's fields, which keep their order), and so does its replay;
// under the reconcile policy, for one tool, the refusal carries the
// attempts.
func TestHTTPUncertainOutcomeVisible(t *testing.T) {
	body := callBody("s1", 1, "bank/transfer_funds", okArgs)
	t.Run("rerun after a crash", func(t *testing.T) {
		h := newHTTPEnv(t, nil, nil)
		key := crashedClaim(t, h.env)
		r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
		if r.status != 200 || r.body["attempts"] != 2.0 || r.body["previous_attempt_uncertain"] != true || r.body["idempotency_key"] != key {
			t.Fatalf("re-run after a crash = %d %s; want 200 with attempts 2, previous_attempt_uncertain true", r.status, r.raw)
		}
		wantOrder := []string{`{"success":true,"result":`, `,"cached":false,"idempotency_key":"` + key + `","attempts":2,"previous_attempt_uncertain":true}`}
		if !strings.HasPrefix(r.raw, wantOrder[0]) || !strings.HasSuffix(strings.TrimSpace(r.raw), wantOrder[1]) {
			t.Errorf("body = %s; want the contract's fields first, then attempts and previous_attempt_uncertain", r.raw)
		}
		again := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
		if again.body["cached"] != true || again.body["attempts"] != 2.0 || again.body["previous_attempt_uncertain"] != true {
			t.Errorf("replay = %s; want cached, attempts 2, previous_attempt_uncertain true", again.raw)
		}
		fresh := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s1", 2, "bank/transfer_funds", okArgs))
		if fresh.body["attempts"] != 1.0 || fresh.body["previous_attempt_uncertain"] != false {
			t.Errorf("a first execution = %s; want attempts 1, previous_attempt_uncertain false", fresh.raw)
		}
	})
	t.Run("rerun after an uncertain failure", func(t *testing.T) {
		h := newHTTPEnv(t, nil, nil)
		fail := true
		h.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			h.Runs.Add(ctx, args)
			if fail {
				fail = false
				return nil, errors.New("connection reset after the request was sent")
			}
			return json.RawMessage(`{"ok":true}`), nil
		})
		first := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
		wantError(t, "uncertain failure", first, 503, gateway.DownstreamFailure, true)
		if first.body["attempts"] != 1.0 {
			t.Errorf("uncertain failure = %s; want attempts 1", first.raw)
		}
		r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
		if r.status != 200 || r.body["attempts"] != 2.0 || r.body["previous_attempt_uncertain"] != true {
			t.Errorf("re-run = %d %s; want 200 with attempts 2, previous_attempt_uncertain true", r.status, r.raw)
		}
	})
	t.Run("reconcile for one tool", func(t *testing.T) {
		h := newHTTPEnv(t, func(o *gateway.Options) {
			o.UncertainTools = map[string]gateway.UncertainPolicy{"bank/transfer_funds": gateway.UncertainReconcile}
		}, nil)
		crashedClaim(t, h.env)
		r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
		wantError(t, "re-send after a crash, reconcile", r, 409, gateway.UncertainOutcome, false)
		if r.body["attempts"] != 1.0 {
			t.Errorf("OUTCOME_UNCERTAIN = %s; want attempts 1", r.raw)
		}
		if n := h.Runs.Total(); n != 0 {
			t.Errorf("handler ran %d times, want 0 under reconcile", n)
		}
		other := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s9", 1, "bank/get_balance", `{"account":"ACC-00001"}`))
		if other.status != 200 {
			t.Errorf("another tool under the default policy = %d %s", other.status, other.raw)
		}
	})
}
