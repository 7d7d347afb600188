package local_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/local"
)

// liveBackend loads the live model (TOOLGATE_LIVE_LIBLLAMA,
// TOOLGATE_LIVE_LOCAL_MODEL) on two threads, greedy with a fixed seed.
func liveBackend(t *testing.T) *local.Backend {
	t.Helper()
	lib, model := testenv.LocalModel(t)
	temp, seed := 0.0, int64(1)
	b, err := local.New(model, &local.Options{Library: lib, Threads: 2, ContextSize: 2048, Temperature: &temp, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestLive runs both envelope modes through the in-process model under
// Checked: what any model must manage under the constraint (a reply of
// the turn's shape, a call only of a shortlisted tool) and the counts the
// backend reports; never the model's judgement.
func TestLive(t *testing.T) {
	b := liveBackend(t)
	path, info := b.Library()
	t.Logf("library %s: %s; context %d tokens", path, info, b.ContextSize())
	backendtest.LiveModes(t, b, 5*time.Minute, true, func(t *testing.T, req *llm.Request, resp *llm.Response) {
		backendtest.UsableReply(t, req, resp)
		if resp.FinishReason != llm.FinishStop {
			t.Errorf("finish %q: want the reply stopped at the envelope's end", resp.FinishReason)
		}
	}, llm.ModeGrammar, llm.ModeEnvelope)
}

// TestLivePlumbing checks, on the live model, what the package promises
// around a generation: the prompt cache, the token budget, seeded
// sampling, streaming, cancellation and native mode's refusal.
func TestLivePlumbing(t *testing.T) {
	b := liveBackend(t)
	chat := func(t *testing.T, req *llm.Request) (*llm.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		return b.Chat(ctx, req)
	}
	t.Run("prompt cache", func(t *testing.T) {
		req := backendtest.Request(llm.ModeGrammar)
		req.MaxTokens = 8
		first, _ := chat(t, req)
		if first == nil {
			t.Fatal("no reply")
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: first.Raw}, llm.Message{Role: llm.RoleUser, Content: "And of ACC-00002?"})
		second, _ := chat(t, req)
		if second == nil {
			t.Fatal("no reply")
		}
		// The second prompt starts with the first (system, tool list, first
		// request): all of that comes from the cache.
		if c := second.Usage.CachedPromptTokens; c < first.Usage.PromptTokens-1 || c >= second.Usage.PromptTokens {
			t.Errorf("second turn reused %d of %d prompt tokens; want at least the first turn's %d less one", c, second.Usage.PromptTokens, first.Usage.PromptTokens)
		}
	})
	t.Run("budget", func(t *testing.T) {
		req := backendtest.Request(llm.ModeGrammar)
		req.MaxTokens = 3
		resp, err := chat(t, req)
		var oe *llm.OutputError
		if !errors.As(err, &oe) || oe.Problem != llm.ProblemTruncated || resp.FinishReason != llm.FinishLength || resp.Usage.CompletionTokens != 3 {
			t.Errorf("Chat with MaxTokens 3 = %v, %+v; want a truncated reply of 3 tokens", err, resp)
		}
	})
	t.Run("seeded sampling repeats", func(t *testing.T) {
		temp := 1.5
		raw := func(seed int64) string {
			req := backendtest.Request(llm.ModeGrammar)
			req.MaxTokens, req.Temperature, req.Seed = 12, &temp, &seed
			resp, _ := chat(t, req)
			if resp == nil {
				t.Fatal("no reply")
			}
			return resp.Raw
		}
		if a, b := raw(7), raw(7); a != b {
			t.Errorf("seed 7 twice at temperature 1.5: %q, %q", a, b)
		}
	})
	t.Run("stream and cancel", func(t *testing.T) {
		req := backendtest.Request(llm.ModeGrammar)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var deltas []string
		req.OnDelta = func(s string) {
			if deltas = append(deltas, s); len(deltas) == 3 {
				cancel()
			}
		}
		_, err := b.Chat(ctx, req)
		if !errors.Is(err, context.Canceled) || len(deltas) != 3 || !strings.HasPrefix(strings.Join(deltas, ""), "{") {
			t.Errorf("Chat cancelled at the third delta = %v after %q", err, deltas)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		// Two Chats at once take turns on the context: both get a reply
		// (cut at their budget), neither an engine error.
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				req := backendtest.Request(llm.ModeGrammar)
				req.MaxTokens = 4
				resp, err := chat(t, req)
				var oe *llm.OutputError
				if resp != nil && resp.Usage.CompletionTokens == 4 && errors.As(err, &oe) {
					err = nil
				}
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("concurrent Chat: %v", err)
			}
		}
	})
	t.Run("native refused", func(t *testing.T) {
		var ce *llm.ConstraintError
		if _, err := chat(t, backendtest.Request(llm.ModeNative)); !errors.As(err, &ce) {
			t.Errorf("Chat in native mode = %v, want a ConstraintError", err)
		}
	})
}

// TestLiveBadModel points the live library at a GGUF file holding only a
// vocabulary: llama.cpp refuses it, and New says so with llama.cpp's
// reason.
func TestLiveBadModel(t *testing.T) {
	lib, _ := testenv.LocalModel(t)
	p := local.VocabOnlyGGUF(t)
	b, err := local.New(p, &local.Options{Library: lib})
	if err == nil {
		b.Close()
		t.Fatal("New loaded a GGUF file without tensors")
	}
	if !errors.Is(err, local.ErrModel) || !strings.Contains(err.Error(), p) {
		t.Errorf("New = %v, want ErrModel naming the file", err)
	}
	t.Logf("New: %v", err)
}

// TestLiveContextFull: a prompt longer than the context window is refused
// before any decode, with an error naming both sizes.
func TestLiveContextFull(t *testing.T) {
	lib, model := testenv.LocalModel(t)
	b, err := local.New(model, &local.Options{Library: lib, Threads: 1, ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	req := backendtest.Request(llm.ModeGrammar)
	req.Messages[1].Content = strings.Repeat("What is the balance of ACC-00001? ", 40)
	_, err = b.Chat(context.Background(), req)
	if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), "context of "+fmt.Sprint(b.ContextSize())) {
		t.Errorf("Chat with a prompt past the context = %v, want ErrInvalidRequest naming the context size", err)
	}
}

// TestLiveUnknownTemplate: a chat template llama.cpp does not know fails
// New, naming it, rather than the first Chat.
func TestLiveUnknownTemplate(t *testing.T) {
	lib, model := testenv.LocalModel(t)
	b, err := local.New(model, &local.Options{Library: lib, Template: "no-such-template"})
	if err == nil {
		b.Close()
		t.Fatal("New accepted an unknown template")
	}
	if !errors.Is(err, local.ErrModel) || !strings.Contains(err.Error(), `"no-such-template"`) {
		t.Errorf("New = %v, want ErrModel naming the template", err)
	}
}
