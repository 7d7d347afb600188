package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/scripted"
)

var quiet = slog.New(slog.DiscardHandler)

func checked(t *testing.T, b llm.Backend, opts *llm.Options) *llm.CheckedBackend {
	t.Helper()
	var o llm.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	cb, err := llm.Checked(b, &o)
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

// repairMessages returns the repair messages Checked appended to the i-th request.
func repairMessages(t *testing.T, req *llm.Request) []map[string]any {
	t.Helper()
	base := len(backendtest.Request(llm.ModeEnvelope).Messages)
	var out []map[string]any
	for _, m := range req.Messages[base:] {
		var body map[string]any
		if m.Role != llm.RoleUser || json.Unmarshal([]byte(m.Content), &body) != nil {
			t.Fatalf("appended message %+v is not a JSON repair message", m)
		}
		out = append(out, body)
	}
	return out
}

func TestRepair(t *testing.T) {
	const good = `{"account":"ACC-00001"}`
	tests := []struct {
		name    string
		mode    llm.Mode
		first   scripted.Reply
		problem llm.OutputProblem
	}{
		{"malformed JSON", llm.ModeEnvelope, scripted.Text(`{"action":"call","tool":"get_balance","arguments":{`), llm.ProblemMalformed},
		{"prose", llm.ModeGrammar, scripted.Text(`I'll check that for you.`), llm.ProblemMalformed},
		{"unknown tool", llm.ModeEnvelope, scripted.Call(backendtest.Unauthorized, `{"transaction_id":"T-1"}`), llm.ProblemUnknownTool},
		{"unknown native tool", llm.ModeNative, scripted.Call(backendtest.Unauthorized, `{"transaction_id":"T-1"}`), llm.ProblemUnknownTool},
		{"truncated", llm.ModeEnvelope, scripted.Answer("The balance is").Truncated(), llm.ProblemTruncated},
		{"two native calls", llm.ModeNative, scripted.NativeCalls(
			llm.ToolCall{Name: "get_balance", Arguments: json.RawMessage(good)},
			llm.ToolCall{Name: "get_balance", Arguments: json.RawMessage(good)}), llm.ProblemTooManyCalls},
		{"extra property (Validate)", llm.ModeNative, scripted.Call("get_balance", `{"account":"ACC-00001","admin":true}`), llm.ProblemInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := scripted.New([]scripted.Reply{tt.first, scripted.Call("get_balance", good)}, nil)
			cb := checked(t, b, &llm.Options{Validate: rejectUnknownProperties})
			resp, err := cb.Chat(context.Background(), backendtest.Request(tt.mode))
			if err != nil {
				t.Fatalf("Chat error = %v, want the repaired call", err)
			}
			if resp.Action != llm.ActionCall || resp.Calls[0].Name != "get_balance" || string(resp.Calls[0].Arguments) != good {
				t.Fatalf("Chat = %+v, want the second, valid call", resp)
			}
			reqs := b.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			rm := repairMessages(t, reqs[1])
			if len(rm) != 1 || rm[0]["problem"] != string(tt.problem) || rm[0]["attempts_left"] != 2.0 {
				t.Errorf("repair message = %v, want problem %s with 2 attempts left", rm, tt.problem)
			}
			for i, r := range reqs {
				data, _ := json.Marshal(r)
				if strings.Contains(string(data), backendtest.Unauthorized) {
					t.Errorf("request %d names the unauthorized tool: %s", i, data)
				}
			}
		})
	}
}

// rejectUnknownProperties is a Validate hook standing in for the
// gateway's schema validation of get_balance.
func rejectUnknownProperties(_ context.Context, tool string, args json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return err
	}
	for k := range m {
		if k != "account" && tool == "get_balance" {
			return fmt.Errorf("/%s: property not allowed", k)
		}
	}
	return nil
}

func TestRepairEchoesOnlyValidatedCalls(t *testing.T) {
	b := scripted.New([]scripted.Reply{
		scripted.Call("get_balance", `{"account":"ACC-00001","admin":true}`),
		scripted.Answer("done"),
	}, nil)
	cb := checked(t, b, &llm.Options{Validate: rejectUnknownProperties})
	if _, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	rm := repairMessages(t, b.Requests()[1])[0]
	call, _ := rm["call"].(map[string]any)
	if call["tool"] != "get_balance" || !strings.Contains(rm["reason"].(string), "/admin: property not allowed") {
		t.Errorf("repair message = %v, want the call and the validation error", rm)
	}
}

// TestValidateGetsTheChatContext checks that the Validate hook runs under
// the context of the Chat call it checks: its values (a trace, the
// caller's deadline) and its cancellation.
func TestValidateGetsTheChatContext(t *testing.T) {
	type key struct{}
	b := scripted.New([]scripted.Reply{scripted.Call("get_balance", `{"account":"ACC-00001"}`)}, nil)
	var got any
	cb := checked(t, b, &llm.Options{Validate: func(ctx context.Context, _ string, _ json.RawMessage) error {
		got = ctx.Value(key{})
		return nil
	}})
	ctx := context.WithValue(context.Background(), key{}, "the turn's")
	if _, err := cb.Chat(ctx, backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	if got != "the turn's" {
		t.Errorf("Validate saw the value %v, want the Chat context's", got)
	}
}

func TestRepairBudgetExhausted(t *testing.T) {
	b := scripted.New([]scripted.Reply{
		scripted.Text("no"),
		scripted.Call(backendtest.Unauthorized, `{}`),
		scripted.Text(`{"action":"answer"}`),
		scripted.Answer("never played"),
	}, nil)
	cb := checked(t, b, nil)
	resp, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	var re *llm.RepairError
	if !errors.As(err, &re) || !errors.Is(err, llm.ErrInvalidOutput) {
		t.Fatalf("Chat = %+v, %v; want *llm.RepairError", resp, err)
	}
	if resp != nil {
		t.Errorf("Chat returned a response %+v with the error", resp)
	}
	wantRaw := []string{"no", `{"action":"call","tool":"` + backendtest.Unauthorized + `","arguments":{}}`, `{"action":"answer"}`}
	wantProblem := []llm.OutputProblem{llm.ProblemMalformed, llm.ProblemUnknownTool, llm.ProblemMalformed}
	if len(re.Attempts) != 3 {
		t.Fatalf("%d attempts, want 3 (1 + 2 repairs)", len(re.Attempts))
	}
	for i, a := range re.Attempts {
		if a.Raw != wantRaw[i] || a.Problem != wantProblem[i] {
			t.Errorf("attempt %d = %q %s, want %q %s", i, a.Raw, a.Problem, wantRaw[i], wantProblem[i])
		}
	}
	if b.Remaining() != 1 {
		t.Errorf("Remaining = %d, want 1: the budget stops the loop", b.Remaining())
	}
	var oe *llm.OutputError
	if !errors.As(err, &oe) || oe.Problem != llm.ProblemMalformed || oe.Raw != "no" {
		t.Errorf("errors.As(RepairError, *OutputError) = %+v, want the first attempt", oe)
	}
	if re.Usage.ToolDefinitionTokens <= 0 || re.Usage.CatalogTokens != 20500 {
		t.Errorf("RepairError.Usage = %+v, want the attempts' usage", re.Usage)
	}
}

func TestNoRepairs(t *testing.T) {
	b := scripted.New([]scripted.Reply{scripted.Text("no"), scripted.Answer("unused")}, nil)
	_, err := checked(t, b, &llm.Options{MaxRepairs: -1}).Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	var re *llm.RepairError
	if !errors.As(err, &re) || len(re.Attempts) != 1 {
		t.Fatalf("Chat error = %v, want a RepairError after 1 attempt", err)
	}
}

func TestCheckedPassesErrorsThrough(t *testing.T) {
	constraint := &llm.ConstraintError{Backend: "scripted", Mode: llm.ModeEnvelope, Message: "format not supported"}
	b := scripted.New([]scripted.Reply{scripted.Fail(constraint)}, nil)
	_, err := checked(t, b, nil).Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if !errors.Is(err, llm.ErrConstraintRejected) {
		t.Fatalf("Chat error = %v, want ErrConstraintRejected", err)
	}

	b = scripted.New(nil, nil)
	bad := backendtest.Request(llm.ModeEnvelope)
	bad.Tools[0].Name = "bad name"
	if _, err := checked(t, b, nil).Chat(context.Background(), bad); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("Chat(bad name) error = %v, want ErrInvalidRequest", err)
	}
	if len(b.Requests()) != 0 {
		t.Error("an invalid request reached the backend")
	}
}

func TestCheckedOptions(t *testing.T) {
	b := scripted.New(nil, nil)
	if _, err := llm.Checked(b, &llm.Options{AllowDowngrade: true}); err == nil {
		t.Error("Checked(AllowDowngrade without Validate) succeeded")
	}
	if _, err := llm.Checked(nil, nil); err == nil {
		t.Error("Checked(nil) succeeded")
	}
	if _, err := llm.Checked(b, &llm.Options{BaseDelay: -1}); err == nil {
		t.Error("Checked(negative BaseDelay) succeeded")
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	b := scripted.New([]scripted.Reply{
		scripted.Answer("one"),
		scripted.Text("bad"), scripted.Answer("two"),
	}, nil)
	cb := checked(t, b, &llm.Options{Registerer: reg})
	// A second wrapper on the same registry shares the collectors.
	if _, err := llm.Checked(b, &llm.Options{Registerer: reg}); err != nil {
		t.Fatalf("second Checked on one registry: %v", err)
	}
	var usage llm.Usage
	for range 2 {
		resp, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
		if err != nil {
			t.Fatal(err)
		}
		usage = resp.Usage
	}
	for _, tt := range []struct {
		name, label, value string
		want               float64
	}{
		{"toolgate_llm_requests_total", "outcome", "ok", 1},
		{"toolgate_llm_requests_total", "outcome", "repaired", 1},
		{"toolgate_llm_rejected_replies_total", "problem", "malformed", 1},
		{"toolgate_llm_tool_definition_tokens", "backend", "scripted", 3}, // histogram sample count
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := metricValue(t, reg, tt.name, tt.label, tt.value); got != tt.want {
				t.Errorf("%s{%s=%q} = %v, want %v", tt.name, tt.label, tt.value, got, tt.want)
			}
		})
	}
	perRequest := usage.ToolDefinitionTokens / 2 // the repaired call made two requests
	if perRequest <= 0 || usage.CatalogTokens != 20500 {
		t.Fatalf("Usage = %+v", usage)
	}
	if got := metricValue(t, reg, "toolgate_llm_catalog_tokens_total", "backend", "scripted"); got != 3*20500 {
		t.Errorf("toolgate_llm_catalog_tokens_total = %v, want %d", got, 3*20500)
	}
	if got := metricValue(t, reg, "toolgate_llm_tool_definition_tokens_total", "backend", "scripted"); got != float64(3*perRequest) {
		t.Errorf("toolgate_llm_tool_definition_tokens_total = %v, want %d", got, 3*perRequest)
	}
}

// metricValue returns the counter value, or the histogram's sample count,
// of the series of name whose label has value.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	v, ok := metricstest.Value(t, reg, name, label, value)
	if !ok {
		t.Fatalf("no series %s{%s=%q}", name, label, value)
	}
	return v
}

func TestUsageSumsAttempts(t *testing.T) {
	b := scripted.New([]scripted.Reply{scripted.Text("bad"), scripted.Answer("ok")}, nil)
	resp, err := checked(t, b, nil).Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	single, err := scripted.New([]scripted.Reply{scripted.Answer("ok")}, nil).Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.ToolDefinitionTokens <= single.Usage.ToolDefinitionTokens {
		t.Errorf("repaired ToolDefinitionTokens = %d, want more than one request's %d", resp.Usage.ToolDefinitionTokens, single.Usage.ToolDefinitionTokens)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	tests := []struct {
		in   string
		want string
	}{
		{"", "0s"}, {"7", "7s"}, {"1.5", "1.5s"}, {"-3", "0s"}, {"soon", "0s"},
		{"Sun, 06 Nov 1994 08:50:37 GMT", "1m0s"},
		{"Sun, 06 Nov 1994 08:40:37 GMT", "0s"},
		{"1e12", "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := llm.ParseRetryAfter(tt.in, now).String(); got != tt.want {
				t.Errorf("ParseRetryAfter(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestIdleStreamRetried: a stream that went silent ([*llm.IdleError]) is
// retried like a 5xx, and the next reply is used.
func TestIdleStreamRetried(t *testing.T) {
	idle := &llm.IdleError{Backend: "scripted", Timeout: time.Minute}
	b := scripted.New([]scripted.Reply{scripted.Fail(fmt.Errorf("scripted: chat: %w", idle)), scripted.Answer("ok")}, nil)
	retries := 0
	cb := checked(t, b, &llm.Options{Sleep: func(context.Context, time.Duration) error { retries++; return nil }})
	resp, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if err != nil || resp.Answer != "ok" || retries != 1 {
		t.Fatalf("Chat(silent stream, then ok) = %+v, %v after %d retries; want ok after 1", resp, err, retries)
	}
}

// TestRepairDoesNotEchoGiantArguments: a call with arguments past 4 KiB is
// not echoed in its repair message (before, a 64 KiB argument string was
// sent back whole with every repair); the reason still says what is wrong.
func TestRepairDoesNotEchoGiantArguments(t *testing.T) {
	b := scripted.New([]scripted.Reply{
		scripted.Call("get_balance", `{"account":"ACC-00001","admin":"`+strings.Repeat("A", 64<<10)+`"}`),
		scripted.Answer("done"),
	}, nil)
	cb := checked(t, b, &llm.Options{Validate: rejectUnknownProperties})
	if _, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	reqs := b.Requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	rm := repairMessages(t, reqs[1])[0]
	if len(last) > 8192 || rm["call"] != nil || !strings.Contains(rm["reason"].(string), "/admin: property not allowed") {
		t.Errorf("repair message of %d bytes, call %v; want the reason without the giant call", len(last), rm["call"] != nil)
	}
}
