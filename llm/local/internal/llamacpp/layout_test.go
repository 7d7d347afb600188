package llamacpp

import (
	"testing"
	"unsafe"
)

// TestLayout pins the offsets of the fields llama.h's x86-64 and arm64
// layouts put where they are (computed from llama.h of node-llama-cpp
// 3.21.1's llama.cpp by the C alignment rules): a field added or moved
// here by mistake fails without the library. Load checks the library
// itself against the same layouts.
func TestLayout(t *testing.T) {
	var m ModelParams
	var c ContextParams
	var b Batch
	var a TokenDataArray
	for _, row := range []struct {
		name      string
		got, want uintptr
	}{
		{"ModelParams.NGPULayers", unsafe.Offsetof(m.NGPULayers), 16},
		{"ModelParams.MainGPU", unsafe.Offsetof(m.MainGPU), 32},
		{"ModelParams.TensorSplit", unsafe.Offsetof(m.TensorSplit), 40},
		{"ModelParams.KVOverrides", unsafe.Offsetof(m.KVOverrides), 64},
		{"ModelParams.VocabOnly", unsafe.Offsetof(m.VocabOnly), 72},
		{"ModelParams.LoadMTP", unsafe.Offsetof(m.LoadMTP), 77},
		{"sizeof ModelParams", unsafe.Sizeof(m), 80},
		{"ContextParams.NThreads", unsafe.Offsetof(c.NThreads), 28},
		{"ContextParams.FlashAttnType", unsafe.Offsetof(c.FlashAttnType), 52},
		{"ContextParams.RopeFreqBase", unsafe.Offsetof(c.RopeFreqBase), 56},
		{"ContextParams.DefragThold", unsafe.Offsetof(c.DefragThold), 84},
		{"ContextParams.CbEval", unsafe.Offsetof(c.CbEval), 88},
		{"ContextParams.TypeK", unsafe.Offsetof(c.TypeK), 104},
		{"ContextParams.AbortCallback", unsafe.Offsetof(c.AbortCallback), 112},
		{"ContextParams.Embeddings", unsafe.Offsetof(c.Embeddings), 128},
		{"ContextParams.KVUnified", unsafe.Offsetof(c.KVUnified), 133},
		{"ContextParams.Samplers", unsafe.Offsetof(c.Samplers), 136},
		{"ContextParams.CtxOther", unsafe.Offsetof(c.CtxOther), 152},
		{"sizeof ContextParams", unsafe.Sizeof(c), 160},
		{"Batch.Token", unsafe.Offsetof(b.Token), 8},
		{"Batch.Logits", unsafe.Offsetof(b.Logits), 48},
		{"sizeof Batch", unsafe.Sizeof(b), 56},
		{"sizeof TokenData", unsafe.Sizeof(TokenData{}), 12},
		{"TokenDataArray.Selected", unsafe.Offsetof(a.Selected), 16},
		{"sizeof TokenDataArray", unsafe.Sizeof(a), 32},
		{"sizeof ChatMessage", unsafe.Sizeof(ChatMessage{}), 16},
	} {
		t.Run(row.name, func(t *testing.T) {
			if row.got != row.want {
				t.Errorf("%s = %d, llama.h has %d", row.name, row.got, row.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	for name, path := range map[string]string{"empty": "", "missing": "/nonexistent/libllama.so"} {
		t.Run(name, func(t *testing.T) {
			if _, err := Load(path); err == nil {
				t.Errorf("Load(%q) succeeded", path)
			}
		})
	}
}

func TestGoString(t *testing.T) {
	if got := GoString(CString("abc")); got != "abc" {
		t.Errorf("GoString(CString(abc)) = %q", got)
	}
	if got := GoString(nil); got != "" {
		t.Errorf("GoString(nil) = %q", got)
	}
}
