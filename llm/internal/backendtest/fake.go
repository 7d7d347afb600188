package backendtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/toolgate/toolgate/llm"
)

// Fake is the provider-independent half of an adapter's wire-level fake:
// a [Recorder] whose request bodies are decoded as JSON and routed by path,
// the reply the model makes, and a hook with which a test answers a chat
// request itself.
type Fake struct {
	*Recorder
	// Reply is what the model says when Handle does not answer.
	Reply Reply
	// Handle, when set, answers the i-th request (counting from 0, all
	// paths together) to the chat path itself when it returns true. It is
	// set before the first request.
	Handle func(i int, w http.ResponseWriter, body map[string]any) bool

	wire Wire
}

// Wire is the provider-specific half of a fake: its paths, and how it
// writes a reply and an error.
type Wire struct {
	// ChatPath is the chat endpoint, e.g. "/api/chat".
	ChatPath string
	// Chat writes reply as the answer to the chat request body.
	Chat func(w http.ResponseWriter, body map[string]any, reply Reply)
	// Routes answers the other paths the provider serves (embeddings);
	// any other path is 404.
	Routes map[string]func(w http.ResponseWriter, body map[string]any)
	// Error writes an HTTP error with the provider's error body for msg.
	Error func(w http.ResponseWriter, status int, msg string)
	// BadJSON is the provider's error message for a body that is not JSON.
	BadJSON string
}

// NewFake starts a [Fake] speaking wire that replies with reply; it is
// closed when t ends.
func NewFake(t testing.TB, reply Reply, wire Wire) *Fake {
	f := &Fake{Reply: reply, wire: wire}
	f.Recorder = NewRecorder(t, func(i int, w http.ResponseWriter, r *http.Request, data []byte) {
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			wire.Error(w, http.StatusBadRequest, wire.BadJSON)
			return
		}
		if route, ok := wire.Routes[r.URL.Path]; ok {
			route(w, body)
			return
		}
		if r.URL.Path != wire.ChatPath {
			http.NotFound(w, r)
			return
		}
		if f.Handle != nil && f.Handle(i, w, body) {
			return
		}
		wire.Chat(w, body, f.Reply)
	})
	return f
}

// FailFirst makes the first n chat requests (all of them when n < 0) fail
// with status, the provider's error body for msg and, unless retryAfter is
// "", a Retry-After header; it sets Handle.
func (f *Fake) FailFirst(n, status int, retryAfter, msg string) {
	f.Handle = func(i int, w http.ResponseWriter, _ map[string]any) bool {
		if n >= 0 && i >= n {
			return false
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		f.wire.Error(w, status, msg)
		return true
	}
}

// Send sends req through b, a backend at f, streaming when stream, fails
// t on an error, and returns the body of the request f got, raw and
// decoded.
func (f *Fake) Send(t *testing.T, b llm.Backend, req *llm.Request, stream bool) ([]byte, map[string]any) {
	t.Helper()
	n := len(f.Requests())
	if stream {
		req.OnDelta = func(string) {}
	}
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	raw := f.Requests()[n]
	return raw, DecodeBody(t, raw)
}

// RunRepair checks in each of modes that after the model calls a tool
// outside the shortlist, the repair request [llm.Checked] sends says what
// was wrong (unknown_tool) and names that tool nowhere (security
// invariant 1 on the wire). newBackend returns a fake and a backend at it.
func RunRepair(t *testing.T, modes []llm.Mode, newBackend func(t *testing.T) (*Fake, llm.Backend)) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			f, b := newBackend(t)
			f.Handle = func(i int, w http.ResponseWriter, body map[string]any) bool {
				var r Reply
				switch {
				case i == 0 && mode == llm.ModeNative:
					r = Reply{Calls: []llm.ToolCall{{ID: "call_1", Name: Unauthorized, Arguments: json.RawMessage(`{"transaction_id":"T-1"}`)}}, Finish: "tool_calls"}
				case i == 0:
					r = Reply{Content: `{"action":"call","tool":"` + Unauthorized + `","arguments":{"transaction_id":"T-1"}}`, Finish: "stop"}
				case mode == llm.ModeNative:
					r = Reply{Content: "I cannot refund.", Finish: "stop"}
				default:
					r = Reply{Content: `{"action":"answer","text":"I cannot refund."}`, Finish: "stop"}
				}
				f.wire.Chat(w, body, r)
				return true
			}
			resp, err := CheckedChat(t, b, &llm.Options{Logger: slog.New(slog.DiscardHandler)}, Request(mode))
			if err != nil || resp.Action != llm.ActionAnswer {
				t.Fatalf("Chat = %+v, %v; want the repaired answer", resp, err)
			}
			reqs := f.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if bytes.Contains(reqs[1], []byte(Unauthorized)) {
				t.Errorf("the repair request names the unknown tool:\n%s", reqs[1])
			}
			if !bytes.Contains(reqs[1], []byte(`unknown_tool`)) {
				t.Errorf("the repair request does not tell the model what was wrong:\n%s", reqs[1])
			}
		})
	}
}

// CheckedChat sends req through [llm.Checked] over b with opts, failing t
// when opts are invalid, and returns what Chat returns.
func CheckedChat(t *testing.T, b llm.Backend, opts *llm.Options, req *llm.Request) (*llm.Response, error) {
	t.Helper()
	cb, err := llm.Checked(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cb.Chat(context.Background(), req)
}

// NewBackend returns the adapter newBackend builds for model from a copy
// of *opts (the zero O when opts is nil) that at has pointed at a fake
// (its base URL, a test key); it fails t on an error. It is each adapter
// test's f.backend.
func NewBackend[O, B any](t testing.TB, newBackend func(model string, opts *O) (B, error), model string, opts *O, at func(*O)) B {
	t.Helper()
	var o O
	if opts != nil {
		o = *opts
	}
	at(&o)
	b, err := newBackend(model, &o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// DeferredRefusal is a row of [RunDeferredRefused]: the message of the
// API's HTTP 400, whether the request carried deferred tools, and whether
// the adapter must mark the refusal [llm.ConstraintError.Deferred].
type DeferredRefusal struct {
	Name, Msg    string
	Deferred     bool
	WantDeferred bool
}

// RunDeferredRefused checks, row by row, that the 400 chat gets (its fake
// answers with msg, to a request with deferred tools when deferred) is an
// *[llm.ConstraintError] that carries the API's message, with Deferred as
// the row wants: a model or API version without tool search is told
// apart from a refusal of something else, so that the runtime can resend
// the shortlist as plain tools.
func RunDeferredRefused(t *testing.T, rows []DeferredRefusal, chat func(t *testing.T, msg string, deferred bool) error) {
	for _, tc := range rows {
		t.Run(tc.Name, func(t *testing.T) {
			err := chat(t, tc.Msg, tc.Deferred)
			var ce *llm.ConstraintError
			if !errors.As(err, &ce) || ce.Deferred != tc.WantDeferred || ce.Message != tc.Msg {
				t.Errorf("Chat error = %#v, want a *llm.ConstraintError with Deferred %v and the API's message", err, tc.WantDeferred)
			}
		})
	}
}

// CallWithoutID checks a backend whose server leaves the call id out: b
// (its fake answering every request with one call of get_balance, without
// an id) is asked [Request]'s native request, streamed when stream; the
// call must come back with an id of the adapter's making, and its result
// is sent back under that id in a second request, whose body the caller
// checks. It returns the id.
func CallWithoutID(t *testing.T, b llm.Backend, stream bool) string {
	t.Helper()
	req := Request(llm.ModeNative)
	if stream {
		req.OnDelta = func(string) {}
	}
	resp, err := b.Chat(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID == "" {
		t.Fatalf("tool calls = %+v, want one with an id", resp.Message.ToolCalls)
	}
	id := resp.Message.ToolCalls[0].ID
	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: id, Name: "get_balance", Content: `{"balance":"1.00"}`})
	if _, err := b.Chat(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	return id
}
