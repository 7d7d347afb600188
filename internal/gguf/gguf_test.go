package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/textcut"
)

func sample() []KeyValue {
	return []KeyValue{
		{"general.architecture", Value{Type: TypeString, Str: "llama"}},
		{"tokenizer.ggml.tokens", Value{Type: TypeArray, Elem: TypeString, Strs: []string{"<unk>", "<s>", "▁a"}}},
		{"tokenizer.ggml.token_type", Value{Type: TypeArray, Elem: TypeInt32, Ints: []int64{2, 3, 1}}},
		{"tokenizer.ggml.scores", Value{Type: TypeArray, Elem: TypeFloat32, Floats: []float64{0, 0, -1.5}}},
		{"tokenizer.ggml.eos_token_id", Value{Type: TypeUint32, Uint: 2}},
		{"general.flag", Value{Type: TypeBool, Uint: 1}},
		{"general.offset", Value{Type: TypeInt64, Int: -7}},
	}
}

func TestReadRoundTrip(t *testing.T) {
	md, err := Read(bytes.NewReader(Encode(sample())), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if md.Version != 3 || md.Tensors != 0 || len(md.KV) != len(sample()) {
		t.Fatalf("Read(Encode(sample)) = version %d, tensors %d, %d keys; want 3, 0, %d", md.Version, md.Tensors, len(md.KV), len(sample()))
	}
	for _, kv := range sample() {
		if got := md.KV[kv.Key]; !reflect.DeepEqual(got, kv.Value) {
			t.Errorf("Read: %s = %+v, want %+v", kv.Key, got, kv.Value)
		}
	}
}

func TestReadKeepsOnlyWhatIsAsked(t *testing.T) {
	md, err := Read(bytes.NewReader(Encode(sample())), func(k string) bool { return k == "tokenizer.ggml.eos_token_id" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.KV) != 1 || md.KV["tokenizer.ggml.eos_token_id"].Uint != 2 {
		t.Fatalf("Read(keep eos) = %+v, want only eos = 2", md.KV)
	}
}

func TestReadRefuses(t *testing.T) {
	good := Encode(sample())
	huge := func(elem Type) []byte { // an array claiming 2^40 elements
		b := Encode([]KeyValue{{"k", Value{Type: TypeString, Str: "x"}}})
		b = b[:len(b)-8-1] // drop the string value
		b = binary.LittleEndian.AppendUint32(b[:len(b)-4], uint32(TypeArray))
		b = binary.LittleEndian.AppendUint32(b, uint32(elem))
		return binary.LittleEndian.AppendUint64(b, 1<<40)
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		limits *Limits
		want   error
	}{
		{"empty", nil, nil, io.ErrUnexpectedEOF},
		{"bad magic", append([]byte("GGUX"), good[4:]...), nil, ErrFormat},
		{"big-endian version", append([]byte("GGUF\x00\x00\x00\x03"), good[8:]...), nil, ErrFormat},
		{"cut short", good[:len(good)-3], nil, io.ErrUnexpectedEOF},
		{"too many keys", good, &Limits{MaxKeys: 3}, ErrLimit},
		{"string too long", good, &Limits{MaxString: 4}, ErrLimit},
		{"array too long", good, &Limits{MaxArray: 2}, ErrLimit},
		{"too many bytes", good, &Limits{MaxBytes: 40}, ErrLimit},
		{"huge string array", huge(TypeString), nil, ErrLimit},
		{"huge number array", huge(TypeUint32), nil, ErrLimit},
		{"unknown type", Encode([]KeyValue{{"k", Value{Type: 13}}}), nil, ErrFormat},
		// gguf.cpp refuses a key given twice: which value a reader
		// takes would be its own choice.
		{"duplicate key", Encode(append(sample(), KeyValue{"tokenizer.ggml.eos_token_id", Value{Type: TypeUint32, Uint: 1}})), nil, ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), nil, tc.limits)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Read(%s) = %v, want %v", tc.name, err, tc.want)
			}
		})
	}
}

// FuzzRead checks that no input panics or allocates past the limits (a
// claimed length is never allocated before it is read).
func FuzzRead(f *testing.F) {
	f.Add(Encode(sample()))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	if p := os.Getenv("TOOLGATE_LIVE_MODEL"); p != "" {
		if fh, err := os.Open(p); err == nil {
			head := make([]byte, 4096)
			n, _ := io.ReadFull(fh, head)
			fh.Close()
			f.Add(head[:n])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := Read(bytes.NewReader(data), nil, &Limits{MaxKeys: 64, MaxString: 1 << 12, MaxArray: 1 << 12, MaxBytes: 1 << 16})
		if err == nil && md == nil {
			t.Fatal("Read returned neither metadata nor an error")
		}
	})
}

// TestReadSaysWhere: an error names the part of the file it is in and
// the byte it starts at, and quotes at most the start of a long key.
func TestReadSaysWhere(t *testing.T) {
	good := Encode(sample()) // header 0-24, key 1 "general.architecture" 24-69
	longKey := Encode([]KeyValue{{strings.Repeat("k", 1<<20), Value{Type: 13}}})
	for _, tc := range []struct {
		name string
		data []byte
		says []string
	}{
		{"cut in the header", good[:6], []string{"header", "at byte 4: unexpected EOF"}},
		{"cut in a key's name", good[:40], []string{"key 1 of 7", "at byte 32: unexpected EOF"}},
		{"cut in a value", good[:60], []string{`key "general.architecture"`, "at byte 56: unexpected EOF"}},
		{"cut after a key", good[:69], []string{"key 2 of 7", "at byte 69: unexpected EOF"}},
		{"a long key's bad type", longKey, []string{`key "kkkk`, "…", "value type 13"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), nil, nil)
			if err == nil {
				t.Fatal("Read succeeded")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Read = %v, want it to say %q", textcut.Shorten(err.Error(), 200), s)
				}
			}
			if len(err.Error()) > 200 {
				t.Errorf("Read's error is %d bytes long", len(err.Error()))
			}
		})
	}
}
