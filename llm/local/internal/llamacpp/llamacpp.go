// Package llamacpp is a small binding, without cgo, to the few functions
// of llama.cpp's C API (libllama.so) that the local backend uses. It loads
// the shared library with github.com/ebitengine/purego and calls it
// through purego's ABI trampolines, structs by value included.
//
// The struct layouts are copied from the llama.h of the llama.cpp that
// .ci/engines builds (node-llama-cpp 3.21.1's bundle, tag v0.4.0), for
// 64-bit platforms; only linux/amd64 has been run. A library of another
// version may order
// its fields otherwise: [Load] reads llama.cpp's default parameters back
// through these layouts and refuses a library whose defaults do not come
// out as that header sets them ([ErrVersion]), rather than pass it
// garbage.
//
// A [Lib] is loaded once per process and file ([Load] returns the same
// one for any path to it, links included): llama.cpp's backends and its
// log callback are process-wide.
package llamacpp

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Errors of [Load] (test with [errors.Is]).
var (
	// ErrLibrary: the library could not be opened or lacks a function.
	ErrLibrary = errors.New("llamacpp: cannot load libllama")
	// ErrVersion: the library's structs are not laid out as this binding's.
	ErrVersion = errors.New("llamacpp: libllama is not the version this binding was written for (llama.cpp of node-llama-cpp 3.21.1)")
)

// Token is a llama_token.
type Token = int32

// ModelParams is struct llama_model_params.
type ModelParams struct {
	Devices             uintptr
	TensorBuftOverrides uintptr
	NGPULayers          int32
	SplitMode           int32
	LoadMode            int32
	LazyMode            int32
	MainGPU             int32
	_                   [4]byte
	TensorSplit         uintptr
	ProgressCallback    uintptr
	ProgressUserData    uintptr
	KVOverrides         uintptr
	VocabOnly           bool
	CheckTensors        bool
	UseExtraBufts       bool
	NoHost              bool
	NoAlloc             bool
	LoadMTP             bool
}

// ContextParams is struct llama_context_params.
type ContextParams struct {
	NCtx              uint32
	NBatch            uint32
	NUbatch           uint32
	NSeqMax           uint32
	NRsSeq            uint32
	NOutputsMax       uint32
	NOutputsMaxPerSeq uint32
	NThreads          int32
	NThreadsBatch     int32
	CtxType           int32
	RopeScalingType   int32
	PoolingType       int32
	AttentionType     int32
	FlashAttnType     int32
	RopeFreqBase      float32
	RopeFreqScale     float32
	YarnExtFactor     float32
	YarnAttnFactor    float32
	YarnBetaFast      float32
	YarnBetaSlow      float32
	YarnOrigCtx       uint32
	DefragThold       float32
	CbEval            uintptr
	CbEvalUserData    uintptr
	TypeK             int32
	TypeV             int32
	AbortCallback     uintptr
	AbortCallbackData uintptr
	Embeddings        bool
	OffloadKQV        bool
	NoPerf            bool
	OpOffload         bool
	SwaFull           bool
	KVUnified         bool
	Samplers          uintptr
	NSamplers         uintptr
	CtxOther          uintptr
}

// Batch is struct llama_batch, its arrays allocated by llama_batch_init.
type Batch struct {
	NTokens int32
	Token   *Token
	Embd    *float32
	Pos     *int32
	NSeqID  *int32
	SeqID   **int32
	Logits  *int8
}

// TokenData is struct llama_token_data.
type TokenData struct {
	ID    Token
	Logit float32
	P     float32
}

// TokenDataArray is struct llama_token_data_array.
type TokenDataArray struct {
	Data     *TokenData
	Size     uintptr
	Selected int64
	Sorted   bool
}

// ChatMessage is struct llama_chat_message.
type ChatMessage struct {
	Role, Content *byte
}

// The expected sizes on 64-bit platforms, from llama.h.
const (
	sizeModelParams   = 80
	sizeContextParams = 160
	sizeBatch         = 56
)

// layoutSlack is the room left after the default-parameter structs a
// library returns: llama.cpp returns them by value into memory the caller
// allocates, so a newer library whose struct has more fields at the end
// would write past [ModelParams] or [ContextParams] into the Go heap. It
// writes into the slack instead, and [Load] refuses it for writing there.
const layoutSlack = 256

// paddedModelParams is what llama_model_default_params is bound to return.
type paddedModelParams struct {
	P     ModelParams
	Slack [layoutSlack]byte
}

// paddedContextParams is what llama_context_default_params is bound to
// return.
type paddedContextParams struct {
	P     ContextParams
	Slack [layoutSlack]byte
}

// Lib is a loaded libllama. Its function fields are llama.cpp's, named as
// in llama.h without the llama_ prefix.
type Lib struct {
	Path string // the path it was first loaded by

	backendInit          func()
	logSet               func(cb, ud uintptr)
	modelDefaultParams   func() paddedModelParams
	contextDefaultParams func() paddedContextParams
	ModelLoadFromFile    func(path string, p ModelParams) uintptr
	ModelFree            func(model uintptr)
	InitFromModel        func(model uintptr, p ContextParams) uintptr
	Free                 func(ctx uintptr)
	ModelGetVocab        func(model uintptr) uintptr
	ModelChatTemplate    func(model uintptr, name *byte) *byte
	VocabNTokens         func(vocab uintptr) int32
	ChatApplyTemplate    func(tmpl *byte, chat *ChatMessage, n uintptr, addAss bool, buf *byte, length int32) int32
	Tokenize             func(vocab uintptr, text *byte, textLen int32, tokens *Token, max int32, addSpecial, parseSpecial bool) int32
	NCtx                 func(ctx uintptr) uint32
	GetMemory            func(ctx uintptr) uintptr
	MemorySeqRm          func(mem uintptr, seq int32, p0, p1 int32) bool
	MemoryClear          func(mem uintptr, data bool)
	BatchInit            func(n, embd, nSeqMax int32) Batch
	BatchFree            func(b Batch)
	Decode               func(ctx uintptr, b Batch) int32
	GetLogitsIth         func(ctx uintptr, i int32) *float32
	// llama.cpp's own grammar sampler: the backend masks with grammar/mask;
	// these serve the agreement test (TestLiveMaskAgreesWithLlamaSampler).
	SamplerInitGrammar func(vocab uintptr, grammar, root string) uintptr
	SamplerApply       func(s uintptr, cur *TokenDataArray)
	SamplerAccept      func(s uintptr, t Token)
	SamplerFree        func(s uintptr)
	printSystemInfo    func() *byte
	file               os.FileInfo // of Path, to know the file by another path
	logMu              sync.Mutex
	logTail            []string
	logCallback        uintptr
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Lib{}
)

// Load opens the libllama at path (loaded once per process and file),
// binds its functions, checks the struct layouts and initializes
// llama.cpp's backends. llama.cpp's log goes to the library's own buffer
// ([Lib.LastLog]), not to stderr.
func Load(path string) (*Lib, error) {
	if unsafe.Sizeof(ModelParams{}) != sizeModelParams || unsafe.Sizeof(ContextParams{}) != sizeContextParams || unsafe.Sizeof(Batch{}) != sizeBatch {
		return nil, fmt.Errorf("%w: this platform (%s/%s) lays the structs out otherwise", ErrVersion, runtime.GOOS, runtime.GOARCH)
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if l, ok := loaded[path]; ok {
		return l, nil
	}
	if path == "" {
		return nil, fmt.Errorf("%w: no path given", ErrLibrary)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLibrary, err)
	}
	// The dynamic loader opens a file once whatever the path; a second
	// Lib over it would take llama.cpp's log callback from the first.
	for _, l := range loaded {
		if os.SameFile(l.file, fi) {
			loaded[path] = l
			return l, nil
		}
	}
	h, err := openLibrary(path)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrLibrary, path, err)
	}
	l := &Lib{Path: path, file: fi}
	binds := []struct {
		fn   any
		name string
	}{
		{&l.backendInit, "llama_backend_init"},
		{&l.logSet, "llama_log_set"},
		{&l.modelDefaultParams, "llama_model_default_params"},
		{&l.contextDefaultParams, "llama_context_default_params"},
		{&l.ModelLoadFromFile, "llama_model_load_from_file"},
		{&l.ModelFree, "llama_model_free"},
		{&l.InitFromModel, "llama_init_from_model"},
		{&l.Free, "llama_free"},
		{&l.ModelGetVocab, "llama_model_get_vocab"},
		{&l.ModelChatTemplate, "llama_model_chat_template"},
		{&l.VocabNTokens, "llama_vocab_n_tokens"},
		{&l.ChatApplyTemplate, "llama_chat_apply_template"},
		{&l.Tokenize, "llama_tokenize"},
		{&l.NCtx, "llama_n_ctx"},
		{&l.GetMemory, "llama_get_memory"},
		{&l.MemorySeqRm, "llama_memory_seq_rm"},
		{&l.MemoryClear, "llama_memory_clear"},
		{&l.BatchInit, "llama_batch_init"},
		{&l.BatchFree, "llama_batch_free"},
		{&l.Decode, "llama_decode"},
		{&l.GetLogitsIth, "llama_get_logits_ith"},
		{&l.SamplerInitGrammar, "llama_sampler_init_grammar"},
		{&l.SamplerApply, "llama_sampler_apply"},
		{&l.SamplerAccept, "llama_sampler_accept"},
		{&l.SamplerFree, "llama_sampler_free"},
		{&l.printSystemInfo, "llama_print_system_info"},
		// A symbol of this version's API (llama_n_ctx_seq is newer than
		// the struct layouts of older releases), checked only for presence.
		{nil, "llama_n_ctx_seq"},
	}
	for _, b := range binds {
		sym, err := symbol(h, b.name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s has no %s: %w", ErrLibrary, path, b.name, ErrVersion)
		}
		if b.fn != nil {
			bind(b.fn, sym)
		}
	}
	if err := l.checkLayout(); err != nil {
		return nil, fmt.Errorf("%w (%s): %v", ErrVersion, path, err)
	}
	l.logCallback = callback(l.log)
	l.logSet(l.logCallback, 0)
	l.backendInit()
	loaded[path] = l
	return l, nil
}

// ModelDefaultParams is llama_model_default_params.
func (l *Lib) ModelDefaultParams() ModelParams { return l.modelDefaultParams().P }

// ContextDefaultParams is llama_context_default_params.
func (l *Lib) ContextDefaultParams() ContextParams { return l.contextDefaultParams().P }

// checkLayout reads llama.cpp's default parameters back and compares them
// with those llama.h's version sets: a field moved by another version
// shows up as a wrong value, a struct grown by another version as bytes
// written into the slack after it.
func (l *Lib) checkLayout() error {
	pm := l.modelDefaultParams()
	if pm.Slack != [layoutSlack]byte{} {
		return fmt.Errorf("llama_model_default_params returns more than the %d bytes of this binding's struct llama_model_params", sizeModelParams)
	}
	m := pm.P
	if m.Devices != 0 || m.NGPULayers != -1 || m.SplitMode != 1 || m.MainGPU != 0 || m.KVOverrides != 0 ||
		m.VocabOnly || !m.UseExtraBufts || m.NoAlloc || m.LoadMTP {
		return fmt.Errorf("llama_model_default_params reads back as %+v", m)
	}
	pc := l.contextDefaultParams()
	if pc.Slack != [layoutSlack]byte{} {
		return fmt.Errorf("llama_context_default_params returns more than the %d bytes of this binding's struct llama_context_params", sizeContextParams)
	}
	c := pc.P
	if c.NCtx != 512 || c.NBatch != 2048 || c.NUbatch != 512 || c.NSeqMax != 1 || c.NOutputsMaxPerSeq != 1 ||
		c.YarnExtFactor != -1 || c.YarnBetaSlow != -1 || c.DefragThold != -1 || c.TypeK != 1 || c.TypeV != 1 ||
		c.Embeddings || !c.OffloadKQV || !c.NoPerf || !c.OpOffload || !c.SwaFull || c.KVUnified || c.Samplers != 0 || c.CtxOther != 0 {
		return fmt.Errorf("llama_context_default_params reads back as %+v", c)
	}
	return nil
}

// maxLogLines bounds the log lines a Lib keeps.
const maxLogLines = 32

// log is llama.cpp's log callback: it keeps the last warnings and errors.
func (l *Lib) log(level int32, text *byte, _ uintptr) {
	if level < 3 || level > 4 || text == nil {
		return
	}
	s := strings.TrimSpace(GoString(text))
	if s == "" {
		return
	}
	l.logMu.Lock()
	defer l.logMu.Unlock()
	if len(l.logTail) >= maxLogLines {
		l.logTail = append(l.logTail[:0], l.logTail[1:]...)
	}
	l.logTail = append(l.logTail, s)
}

// LastLog returns and forgets llama.cpp's warnings and errors since the
// last call, one per line: what a failed call said about its failure.
func (l *Lib) LastLog() string {
	l.logMu.Lock()
	defer l.logMu.Unlock()
	s := strings.Join(l.logTail, "\n")
	l.logTail = l.logTail[:0]
	return s
}

// SystemInfo returns llama_print_system_info: the CPU features the
// library was built for.
func (l *Lib) SystemInfo() string { return GoString(l.printSystemInfo()) }

// ChatTemplate returns the model's default chat template, "" when the
// GGUF has none.
func (l *Lib) ChatTemplate(model uintptr) string {
	return GoString(l.ModelChatTemplate(model, nil))
}

// GoString copies the NUL-terminated C string at p; "" for nil.
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// CString returns s as a NUL-terminated byte array in Go memory.
func CString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// At returns element k of the array (whose Data llama.cpp's samplers may
// have replaced).
func (a *TokenDataArray) At(k int) TokenData { return unsafe.Slice(a.Data, a.Size)[k] }
