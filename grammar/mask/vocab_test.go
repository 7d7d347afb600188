package mask

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/gguf"
)

// ggufVocab is a GGUF file holding a vocabulary's metadata, as llama.cpp's
// converter writes it (no tensors).
func ggufVocab(model string, tokens []string, types []int64, extra ...gguf.KeyValue) []byte {
	kvs := []gguf.KeyValue{
		{Key: "general.architecture", Value: gguf.Value{Type: gguf.TypeString, Str: "llama"}},
		{Key: "tokenizer.ggml.model", Value: gguf.Value{Type: gguf.TypeString, Str: model}},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Value{Type: gguf.TypeArray, Elem: gguf.TypeString, Strs: tokens}},
		{Key: "tokenizer.ggml.scores", Value: gguf.Value{Type: gguf.TypeArray, Elem: gguf.TypeFloat32, Floats: make([]float64, len(tokens))}},
	}
	if types != nil {
		kvs = append(kvs, gguf.KeyValue{Key: "tokenizer.ggml.token_type", Value: gguf.Value{Type: gguf.TypeArray, Elem: gguf.TypeInt32, Ints: types}})
	}
	return gguf.Encode(append(kvs, extra...))
}

func eos(id uint64) gguf.KeyValue {
	return gguf.KeyValue{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Value{Type: gguf.TypeUint32, Uint: id}}
}

func pre(name string) gguf.KeyValue {
	return gguf.KeyValue{Key: "tokenizer.ggml.pre", Value: gguf.Value{Type: gguf.TypeString, Str: name}}
}

func TestReadGGUF(t *testing.T) {
	for _, tc := range []struct {
		name   string
		file   []byte
		pieces []string
		kinds  []Kind
	}{
		{"sentencepiece",
			ggufVocab("llama",
				[]string{"<unk>", "<s>", "</s>", "<0x0A>", "<0xE2>", "▁the", "▁▁", "é", "<|user|>", "<unused0>", "<|im_end|>"},
				[]int64{2, 3, 3, 6, 6, 1, 1, 1, 4, 5, 3}, eos(2)),
			[]string{"<unk>", "<s>", "</s>", "\n", "\xE2", " the", "  ", "é", "<|user|>", "<unused0>", "<|im_end|>"},
			[]Kind{KindControl, KindControl, KindEnd, KindText, KindText, KindText, KindText, KindText, KindText, KindControl, KindEnd}},
		{"byte-level BPE",
			ggufVocab("gpt2", []string{"Ġthe", "Ċ", "Ã©", "<|endoftext|>", "ĠðŁĺ", "a中", "<tool>", "<0xE2>", "Ā"}, []int64{1, 1, 1, 3, 1, 1, 4, 6, 0}),
			[]string{" the", "\n", "é", "<|endoftext|>", " \xF0\x9F\x98", "a[UNK_BYTE_0xe4b8ada中]", "<tool>", "\xE2", ""},
			[]Kind{KindText, KindText, KindText, KindEnd, KindText, KindText, KindText, KindText, KindText}},
		// llama.cpp gives a token of no type it knows (0, or past 6) an
		// empty piece.
		{"sentencepiece, undefined token types",
			ggufVocab("llama", []string{"▁a", "▁b", "c"}, []int64{0, 7, 1}),
			[]string{"", "", "c"}, []Kind{KindText, KindText, KindText}},
		// BPE whose pre-tokenizer escapes spaces as "▁" (llama.cpp's
		// escape_whitespaces): pieces as SentencePiece's.
		{"BPE with escaped spaces",
			ggufVocab("gpt2", []string{"▁the", "<0x0A>", "é", "<tool>"}, []int64{1, 6, 1, 4}, pre("sarvam-moe")),
			[]string{" the", "\n", "é", "<tool>"}, []Kind{KindText, KindText, KindText, KindText}},
		{"gemma4 tokenizer",
			ggufVocab("gemma4", []string{"▁the", "<0xE2>", "<|tool_call>"}, []int64{1, 6, 4}),
			[]string{" the", "\xE2", "<|tool_call>"}, []Kind{KindText, KindText, KindText}},
		// llama.cpp's list of end-of-generation texts, whatever the
		// token's type (a normal one is made a control token).
		{"end tokens by their text",
			ggufVocab("gpt2", []string{"<|im_end|>", "<turn|>", "[EOT]", "<|return|>", "<end_of_utterance>", "<|im_start|>"}, []int64{1, 3, 4, 3, 3, 3}),
			[]string{"<|im_end|>", "<turn|>", "[EOT]", "<|return|>", "<end_of_utterance>", "<|im_start|>"},
			[]Kind{KindEnd, KindEnd, KindEnd, KindEnd, KindEnd, KindControl}},
		{"no token types", ggufVocab("llama", []string{"▁a", "b"}, nil, eos(1)),
			[]string{" a", "b"}, []Kind{KindText, KindEnd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ReadGGUF(bytes.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var pieces []string
			var kinds []Kind
			for id := range v.Len() {
				pieces = append(pieces, string(v.Piece(id)))
				kinds = append(kinds, v.Kind(id))
			}
			if !slices.Equal(pieces, tc.pieces) || !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("ReadGGUF = %q %v,\nwant %q %v", pieces, kinds, tc.pieces, tc.kinds)
			}
		})
	}
}

func TestNewVocabularyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces [][]byte
		kinds  []Kind
	}{
		{"no tokens", nil, nil},
		{"kinds of another length", [][]byte{[]byte("a")}, nil},
		{"unknown kind", [][]byte{[]byte("a")}, []Kind{7}},
		// a Fill walks a piece byte by byte, one stack frame a byte: an
		// 8 MiB token overflowed the goroutine's stack, a fatal error
		{"a piece past 64 KiB", [][]byte{[]byte("a"), bytes.Repeat([]byte("ab"), 1<<15+1)}, []Kind{KindText, KindText}},
		// the trie costs about 25 bytes of memory a byte of pieces
		{"pieces past 16 MiB in all", slices.Repeat([][]byte{bytes.Repeat([]byte("x"), 1<<16)}, 257), make([]Kind, 257)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewVocabulary(tc.pieces, tc.kinds); !errors.Is(err, ErrVocabulary) {
				t.Errorf("NewVocabulary(%s) = %v, want ErrVocabulary", tc.name, err)
			}
		})
	}
}

func TestReadGGUFRefuses(t *testing.T) {
	good := ggufVocab("llama", []string{"a", "b"}, []int64{1, 1}, eos(1))
	for _, tc := range []struct {
		name string
		file []byte
		want error
	}{
		{"not GGUF", []byte("GGML...."), ErrVocabulary},
		{"cut short", good[:len(good)-2], io.ErrUnexpectedEOF},
		{"no tokens", gguf.Encode(nil), ErrVocabulary},
		{"unknown tokenizer", ggufVocab("bert", []string{"a"}, nil), ErrVocabulary},
		{"types of another length", ggufVocab("llama", []string{"a", "b"}, []int64{1}), ErrVocabulary},
		{"eos out of range", ggufVocab("llama", []string{"a"}, nil, eos(5)), ErrVocabulary},
		{"bad byte token", ggufVocab("llama", []string{"<0xZZ>"}, []int64{6}), ErrVocabulary},
		{"bad BPE byte token", ggufVocab("gpt2", []string{"Ā"}, []int64{6}), ErrVocabulary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadGGUF(bytes.NewReader(tc.file)); !errors.Is(err, tc.want) {
				t.Fatalf("ReadGGUF(%s) = %v, want %v", tc.name, err, tc.want)
			}
		})
	}
}

// TestReadGGUFErrorsAreShort: an error quotes at most the start of a
// long text of the file.
func TestReadGGUFErrorsAreShort(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		file []byte
		says string
	}{
		{"long tokenizer model", ggufVocab(long, []string{"a"}, nil), "tokenizer model"},
		{"long bad byte token", ggufVocab("llama", []string{"a", "<0x" + long}, []int64{1, 6}), "token 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadGGUF(bytes.NewReader(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.says) || len(err.Error()) > 200 {
				t.Errorf("ReadGGUF = %.200v (%d bytes), want an error of at most 200 bytes saying %q", err, len(fmt.Sprint(err)), tc.says)
			}
		})
	}
}

// FuzzReadGGUF: no input panics; what is read is a usable vocabulary.
func FuzzReadGGUF(f *testing.F) {
	f.Add(ggufVocab("llama", []string{"<unk>", "<s>", "</s>", "<0x0A>", "▁the"}, []int64{2, 3, 3, 6, 1}, eos(2)))
	f.Add(ggufVocab("gpt2", []string{"Ġthe", "Ċ"}, []int64{1, 1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadGGUF(bytes.NewReader(data))
		if err != nil {
			return
		}
		if v.Len() == 0 {
			t.Fatal("ReadGGUF returned an empty vocabulary")
		}
		v.theTrie()
	})
}

// liveModelPath returns the path of a real GGUF model
// (TOOLGATE_LIVE_MODEL, else the TinyLlama file .ci/engines caches), or ""
// when there is none.
func liveModelPath() string {
	if p := os.Getenv("TOOLGATE_LIVE_MODEL"); p != "" {
		return p
	}
	cache := os.Getenv("TOOLGATE_ENGINES_CACHE")
	if cache == "" {
		cache = "/var/cache/toolgate-engines"
	}
	p := filepath.Join(cache, "model", "tinyllama-1.1b-chat-iq2_xxs-9ee11adf.gguf")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// liveModel returns liveModelPath, or skips the test when there is none.
func liveModel(tb testing.TB) string {
	tb.Helper()
	p := liveModelPath()
	if p == "" {
		tb.Skip("no GGUF model: set TOOLGATE_LIVE_MODEL or run .ci/engines build")
	}
	return p
}

func readLiveVocab(tb testing.TB) *Vocabulary {
	tb.Helper()
	f, err := os.Open(liveModel(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	v, err := ReadGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// TestReadGGUFTinyLlama reads the real TinyLlama vocabulary and checks the
// pieces llama.cpp's token_to_piece gives for a few known ids.
func TestReadGGUFTinyLlama(t *testing.T) {
	v := readLiveVocab(t)
	if v.Len() != 32000 {
		t.Fatalf("Len() = %d, want 32000", v.Len())
	}
	for _, tc := range []struct {
		id    int
		piece string
		kind  Kind
	}{
		{0, "<unk>", KindControl}, {1, "<s>", KindControl}, {2, "</s>", KindEnd},
		{13, "\n", KindText}, {29871, " ", KindText}, {450, " The", KindText},
	} {
		t.Run(tc.piece, func(t *testing.T) {
			if got := string(v.Piece(tc.id)); got != tc.piece || v.Kind(tc.id) != tc.kind {
				t.Errorf("token %d = %q %v, want %q %v", tc.id, got, v.Kind(tc.id), tc.piece, tc.kind)
			}
		})
	}
}
