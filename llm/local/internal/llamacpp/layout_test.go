package llamacpp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/toolgate/toolgate/internal/testenv"
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

// defaultsLib is a Lib whose default-parameter functions return the
// defaults of llama.h, as the library's would, changed by edit.
func defaultsLib(edit func(*paddedModelParams, *paddedContextParams)) *Lib {
	m := paddedModelParams{P: ModelParams{NGPULayers: -1, SplitMode: 1, UseExtraBufts: true}}
	c := paddedContextParams{P: ContextParams{NCtx: 512, NBatch: 2048, NUbatch: 512, NSeqMax: 1, NOutputsMaxPerSeq: 1,
		YarnExtFactor: -1, YarnBetaSlow: -1, DefragThold: -1, TypeK: 1, TypeV: 1,
		OffloadKQV: true, NoPerf: true, OpOffload: true, SwaFull: true}}
	edit(&m, &c)
	return &Lib{
		modelDefaultParams:   func() paddedModelParams { return m },
		contextDefaultParams: func() paddedContextParams { return c },
	}
}

// TestCheckLayout: a library whose defaults do not read back as llama.h
// sets them, or whose structs are longer than the binding's (a newer
// llama.cpp's fields at the end, written into the slack), is refused.
func TestCheckLayout(t *testing.T) {
	for _, row := range []struct {
		name string
		edit func(*paddedModelParams, *paddedContextParams)
		says string // "" for no error
	}{
		{"llama.h's defaults", func(*paddedModelParams, *paddedContextParams) {}, ""},
		{"a model field moved", func(m *paddedModelParams, _ *paddedContextParams) { m.P.NGPULayers = 0 }, "llama_model_default_params reads back"},
		{"a context field moved", func(_ *paddedModelParams, c *paddedContextParams) { c.P.TypeK = 0 }, "llama_context_default_params reads back"},
		{"longer model params", func(m *paddedModelParams, _ *paddedContextParams) { m.Slack[0] = 1 }, "more than the 80 bytes"},
		{"longer context params", func(_ *paddedModelParams, c *paddedContextParams) { c.Slack[7] = 0xff }, "more than the 160 bytes"},
	} {
		t.Run(row.name, func(t *testing.T) {
			err := defaultsLib(row.edit).checkLayout()
			if row.says == "" && err != nil || row.says != "" && (err == nil || !strings.Contains(err.Error(), row.says)) {
				t.Errorf("checkLayout = %v, want %q", err, row.says)
			}
		})
	}
	t.Run("room for a longer struct", func(t *testing.T) {
		if m, c := unsafe.Sizeof(paddedModelParams{}), unsafe.Sizeof(paddedContextParams{}); m < sizeModelParams+layoutSlack || c < sizeContextParams+layoutSlack {
			t.Errorf("the padded structs are %d and %d bytes, want the struct and %d more", m, c, layoutSlack)
		}
	})
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

// TestLoadSameFile: the same library by another path (a symbolic link,
// as libllama.so.0 is to libllama.so) is the one already loaded, not a
// second Lib whose llama_log_set would take llama.cpp's log from the
// first.
func TestLoadSameFile(t *testing.T) {
	lib, _ := testenv.LocalModel(t)
	link := filepath.Join(t.TempDir(), "libllama-link.so")
	if err := os.Symlink(lib, link); err != nil {
		t.Fatal(err)
	}
	first, err := Load(lib)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Errorf("Load(%s) after Load(%s) made a second Lib for the same file", link, lib)
	}
}
