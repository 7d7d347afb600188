package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/gguf"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/local/internal/llamacpp"
)

// vocabOnlyGGUF writes a GGUF file holding a vocabulary and no tensors:
// the mask can read it, llama.cpp cannot load it as a model.
func vocabOnlyGGUF(t *testing.T) string {
	t.Helper()
	data := gguf.Encode([]gguf.KeyValue{
		{Key: "general.architecture", Value: gguf.Value{Type: gguf.TypeString, Str: "llama"}},
		{Key: "tokenizer.ggml.model", Value: gguf.Value{Type: gguf.TypeString, Str: "llama"}},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Value{Type: gguf.TypeArray, Elem: gguf.TypeString, Strs: []string{"<s>", "</s>", "▁a", "{"}}},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Value{Type: gguf.TypeArray, Elem: gguf.TypeInt32, Ints: []int64{3, 3, 1, 1}}},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Value{Type: gguf.TypeUint32, Uint: 1}},
	})
	p := filepath.Join(t.TempDir(), "vocab-only.gguf")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNewErrors runs without llama.cpp: every way New can be pointed at
// something missing or wrong fails with an error that says which.
func TestNewErrors(t *testing.T) {
	model := vocabOnlyGGUF(t)
	notLib := testenv.WriteFile(t, t.TempDir(), "libllama.so", "not an ELF file")
	for _, row := range []struct {
		name, model, library, env string
		want                      error
		says                      string
	}{
		{"no model", "", "/x/libllama.so", "", ErrModel, "no model file"},
		{"missing model", filepath.Join(t.TempDir(), "absent.gguf"), "/x/libllama.so", "", ErrModel, "absent.gguf"},
		{"not a GGUF file", testenv.WriteFile(t, t.TempDir(), "m.gguf", "GGML and more bytes"), "/x/libllama.so", "", ErrModel, "not a GGUF file"},
		{"truncated GGUF", testenv.WriteFile(t, t.TempDir(), "cut.gguf", "GGUF\x03\x00"), "/x/libllama.so", "", ErrModel, "vocabulary"},
		{"no library named", model, "", "", ErrLibrary, LibraryEnv},
		{"missing library", model, filepath.Join(t.TempDir(), "libllama.so"), "", ErrLibrary, "no such file"},
		{"missing library from the environment", model, "", filepath.Join(t.TempDir(), "libllama.so"), ErrLibrary, "no such file"},
		{"not a library", model, notLib, "", ErrLibrary, notLib},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Setenv(LibraryEnv, row.env)
			b, err := New(row.model, &Options{Library: row.library})
			if err == nil {
				b.Close()
				t.Fatal("New succeeded")
			}
			if !errors.Is(err, row.want) || !strings.Contains(err.Error(), row.says) {
				t.Errorf("New = %v, want %v saying %q", err, row.want, row.says)
			}
		})
	}
	t.Run("bad options", func(t *testing.T) {
		neg := -1.0
		type badRow struct {
			name, says string
			o          *Options
		}
		rows := []badRow{
			{"temperature", "Options.Temperature", &Options{Temperature: &neg}},
			{"threads", "Options.Threads", &Options{Threads: -1}},
			{"max tokens", "MaxTokens -2", &Options{MaxTokens: -2}},
			// llama.cpp takes them as an int32 and a uint32: more would
			// wrap (a context of 1<<32 tokens became the model's 2,048).
			{"threads past ggml's", "Options.Threads 513", &Options{Threads: 513}},
		}
		if strconv.IntSize == 64 { // on a 32-bit system no int is past a uint32
			past := int64(1) << 32
			rows = append(rows, badRow{"context past uint32", "Options.ContextSize 4294967296", &Options{ContextSize: int(past)}})
		}
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				t.Setenv(LibraryEnv, "")
				if _, err := New(model, row.o); err == nil || !strings.Contains(err.Error(), row.says) {
					t.Errorf("New = %v, want an error naming the option (%q)", err, row.says)
				}
			})
		}
	})
}

func TestConstraintGBNF(t *testing.T) {
	t.Run("grammar", func(t *testing.T) {
		req := backendtest.Request(llm.ModeGrammar)
		src, n, err := constraintGBNF(req, nil)
		if err != nil || src != backendtest.GBNF || n == 0 {
			t.Errorf("constraintGBNF = %q, %d, %v; want the request's GBNF and its tokens", src, n, err)
		}
	})
	t.Run("envelope", func(t *testing.T) {
		src, _, err := constraintGBNF(backendtest.Request(llm.ModeEnvelope), nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gbnf.Parse(src)
		if err != nil {
			t.Fatalf("the envelope schema's grammar does not parse: %v", err)
		}
		m, _ := gbnf.NewMatcher(g)
		if _, err := m.Write([]byte(`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`)); err != nil || !m.Accepts() {
			t.Errorf("the grammar refuses a call the schema admits: %v", err)
		}
	})
	t.Run("native refused", func(t *testing.T) {
		_, _, err := constraintGBNF(backendtest.Request(llm.ModeNative), nil)
		var ce *llm.ConstraintError
		if !errors.As(err, &ce) || ce.Mode != llm.ModeNative {
			t.Errorf("constraintGBNF = %v, want a ConstraintError for native mode", err)
		}
	})
	t.Run("envelope schema that does not compile", func(t *testing.T) {
		req := backendtest.Request(llm.ModeEnvelope)
		req.Constraint.EnvelopeSchema = json.RawMessage(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`)
		var ce *llm.ConstraintError
		if _, _, err := constraintGBNF(req, nil); !errors.As(err, &ce) {
			t.Errorf("constraintGBNF = %v, want a ConstraintError", err)
		}
	})
}

func TestTemplate(t *testing.T) {
	t.Run("fallback", func(t *testing.T) {
		for in, want := range map[string]string{"": "chatml", "  \n": "chatml", "zephyr": "zephyr", "{{ x }}": "{{ x }}"} {
			t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
				if got := templateOr(in); got != want {
					t.Errorf("templateOr(%q) = %q, want %q", in, got, want)
				}
			})
		}
	})
	t.Run("described", func(t *testing.T) {
		if got := describeTemplate("llama3"); got != `"llama3"` {
			t.Errorf("describeTemplate(name) = %s", got)
		}
		long := "{% for m in messages %}" + strings.Repeat("x", 100)
		if got := describeTemplate(long); !strings.HasPrefix(got, "of the GGUF ({% for") || len(got) > 90 {
			t.Errorf("describeTemplate(text) = %s", got)
		}
	})
	t.Run("NUL", func(t *testing.T) {
		// llama_chat_message holds C strings: a NUL would end the
		// message there, dropping the rest unseen.
		got := chatMessages([]llm.Message{{Role: llm.RoleTool, Name: "t", Content: "before\x00after"}})
		if len(got) != 1 || got[0].content != "Result of t: before\uFFFDafter" {
			t.Errorf("chatMessages(a NUL) = %q, want the NUL replaced by U+FFFD", got)
		}
	})
	t.Run("roles", func(t *testing.T) {
		got := chatMessages([]llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "hi"},
			{Role: llm.RoleAssistant, Content: `{"action":"answer","text":"x"}`},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "get_balance", Arguments: json.RawMessage(`{"account":"A"}`)}}},
			{Role: llm.RoleTool, Name: "get_balance", Content: `{"balance":"1.00"}`},
		})
		want := []chatMessage{
			{"system", "sys"}, {"user", "hi"}, {"assistant", `{"action":"answer","text":"x"}`},
			{"assistant", `{"action":"call","tool":"get_balance","arguments":{"account":"A"}}`},
			{"user", `Result of get_balance: {"balance":"1.00"}`},
		}
		if len(got) != len(want) {
			t.Fatalf("chatMessages = %v", got)
		}
		//testlint:rows the rows are one conversation's messages, compared in order
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("message %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

// TestTokenizeBoundedByContext: a prompt of more tokens than the context
// holds fails naming both sizes, and the room asked of llama_tokenize is
// the context's, not the text's (a prompt of a megabyte is not given four
// megabytes of tokens).
func TestTokenizeBoundedByContext(t *testing.T) {
	var asked []int32
	lib := &llamacpp.Lib{Tokenize: func(_ uintptr, _ *byte, n int32, toks *llamacpp.Token, max int32, _, _ bool) int32 {
		asked = append(asked, max)
		if n > max { // one token per byte, as llama.cpp says: the count, negated
			return -n
		}
		clear(unsafe.Slice(toks, n))
		return n
	}}
	b := &Backend{lib: lib, nctx: 256}
	for _, tc := range []struct {
		name    string
		bytes   int
		wantErr bool
	}{
		{"within the context", 200, false},
		{"the context exactly", 256, false},
		{"past the context", 1 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = asked[:0]
			toks, err := b.tokenize(strings.Repeat("a", tc.bytes))
			if tc.wantErr {
				if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), fmt.Sprintf("prompt's %d tokens fill the context of 256", tc.bytes)) {
					t.Errorf("tokenize = %v, want ErrInvalidRequest naming %d tokens and the context", err, tc.bytes)
				}
			} else if err != nil || len(toks) != tc.bytes {
				t.Errorf("tokenize = %d tokens, %v; want %d", len(toks), err, tc.bytes)
			}
			for _, max := range asked {
				if max > 257 {
					t.Errorf("llama_tokenize was given room for %d tokens, more than the context's 256 and one", max)
				}
			}
		})
	}
}
