package local

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/mask"
	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/local/internal/llamacpp"
)

// LibraryEnv is the environment variable that names libllama.so when
// [Options.Library] is "".
const LibraryEnv = "TOOLGATE_LIBLLAMA"

// Errors of [New] (test with [errors.Is]).
var (
	// ErrLibrary: libllama.so is not named, missing, not a library, or
	// not the llama.cpp version the binding was written for.
	ErrLibrary = errors.New("local: cannot load llama.cpp's library")
	// ErrModel: the model file is missing, not a GGUF file, or llama.cpp
	// cannot load it.
	ErrModel = errors.New("local: cannot load the model")
	// ErrClosed: Chat after Close.
	ErrClosed = errors.New("local: the backend is closed")
)

// Options configures a [Backend]. A nil *Options means all defaults.
type Options struct {
	// Library is the path of libllama.so. "" means $TOOLGATE_LIBLLAMA.
	Library string
	// Threads is the number of CPU threads a decode uses, at most 512.
	// 0 means the number of CPUs, at most 8.
	Threads int
	// ContextSize is the context window in tokens (prompt and reply), at
	// most 4,294,967,040. 0 means the model's training context.
	ContextSize int
	// Template is the chat template: a name llama.cpp knows ("chatml",
	// "llama3", "zephyr", ...) or a template text it recognizes. "" means
	// the GGUF's, else "chatml".
	Template string
	// Temperature is the sampling temperature of requests that set none.
	// nil means 0 (greedy).
	Temperature *float64
	// Seed is the sampling seed of requests that set none. nil means a
	// random one per request.
	Seed *int64
	// MaxTokens bounds a reply when the request sets no MaxTokens. 0 means
	// [llm.DefaultMaxTokens].
	MaxTokens int
}

// Backend is a GGUF model loaded in process. It is safe for concurrent
// use; Chats run one at a time (package documentation).
type Backend struct {
	opts     Options
	lib      *llamacpp.Lib
	vocab    *mask.Vocabulary
	template string
	path     string

	mu      sync.Mutex // guards what follows, and the llama.cpp context
	model   uintptr
	lctx    uintptr
	lvocab  uintptr
	nctx    int
	batch   llamacpp.Batch
	kv      kvState
	engines map[string]*mask.Engine
	// schemas holds the envelope schemas' grammars, compiled once each.
	schemas *grammar.Cache
	// sess is the last generation's session, reused (Reset keeps its
	// masks) while the next one is of the same engine.
	sess    *mask.Session
	sessEng *mask.Engine
}

var _ llm.Backend = (*Backend)(nil)

// The most [Options.Threads] and [Options.ContextSize] may be: ggml's
// GGML_MAX_N_THREADS, and llama.cpp's n_ctx, a uint32 rounded up to a
// multiple of 256. More would not reach llama.cpp as asked: the fields
// are converted to int32 and uint32. (maxContext is an int64: on a 32-bit
// system no int reaches it.)
const (
	maxThreads       = 512
	maxContext int64 = math.MaxUint32 &^ 255
)

// maxEngines bounds the grammars a Backend keeps prepared.
const maxEngines = 32

// New loads the GGUF model at modelPath with llama.cpp's library. Errors
// wrap [ErrLibrary] or [ErrModel] and say what is missing or wrong.
func New(modelPath string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Temperature != nil && !(*o.Temperature >= 0) {
		return nil, fmt.Errorf("local: Options.Temperature %v must not be negative", *o.Temperature)
	}
	if o.Threads < 0 || o.ContextSize < 0 || o.MaxTokens < 0 {
		return nil, fmt.Errorf("local: Options.Threads %d, ContextSize %d and MaxTokens %d must not be negative", o.Threads, o.ContextSize, o.MaxTokens)
	}
	if o.Threads > maxThreads {
		return nil, fmt.Errorf("local: Options.Threads %d is more than ggml's %d", o.Threads, maxThreads)
	}
	if int64(o.ContextSize) > maxContext {
		return nil, fmt.Errorf("local: Options.ContextSize %d is more than llama.cpp's %d tokens", o.ContextSize, maxContext)
	}
	vocab, err := readVocabulary(modelPath)
	if err != nil {
		return nil, err
	}
	libPath := cmp.Or(o.Library, os.Getenv(LibraryEnv))
	if libPath == "" {
		return nil, fmt.Errorf("%w: no library named: set Options.Library (--library) or %s to the path of libllama.so (.ci/engines builds one: build_libllama)", ErrLibrary, LibraryEnv)
	}
	lib, err := llamacpp.Load(libPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLibrary, err)
	}
	b := &Backend{opts: o, lib: lib, vocab: vocab, path: modelPath, engines: map[string]*mask.Engine{},
		schemas: grammar.NewCache(maxEngines)}
	if err := b.load(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// readVocabulary checks that path is a GGUF file and reads its
// vocabulary for the mask.
func readVocabulary(path string) (*mask.Vocabulary, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no model file named", ErrModel)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return nil, fmt.Errorf("%w: %s is not a GGUF file (it does not start with \"GGUF\")", ErrModel, path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	v, err := mask.ReadGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the vocabulary: %w", ErrModel, path, err)
	}
	return v, nil
}

// load loads the model and makes its context.
func (b *Backend) load() error {
	l := b.lib
	mp := l.ModelDefaultParams()
	mp.NGPULayers = 0
	b.model = l.ModelLoadFromFile(b.path, mp)
	if b.model == 0 {
		return fmt.Errorf("%w: llama.cpp could not load %s: %s", ErrModel, b.path, orUnknown(l.LastLog()))
	}
	b.lvocab = l.ModelGetVocab(b.model)
	if n := int(l.VocabNTokens(b.lvocab)); n != b.vocab.Len() {
		return fmt.Errorf("%w: %s: llama.cpp reads %d tokens, the GGUF's vocabulary %d", ErrModel, b.path, n, b.vocab.Len())
	}
	threads := b.opts.Threads
	if threads == 0 {
		threads = min(runtime.NumCPU(), 8)
	}
	cp := l.ContextDefaultParams()
	cp.NCtx = uint32(b.opts.ContextSize)
	cp.NBatch, cp.NUbatch = promptBatch, promptBatch
	cp.NThreads, cp.NThreadsBatch = int32(threads), int32(threads)
	cp.NoPerf = true
	b.lctx = l.InitFromModel(b.model, cp)
	if b.lctx == 0 {
		return fmt.Errorf("%w: llama.cpp could not make a context of %d tokens for %s: %s", ErrModel, b.opts.ContextSize, b.path, orUnknown(l.LastLog()))
	}
	b.nctx = int(l.NCtx(b.lctx))
	b.batch = l.BatchInit(promptBatch, 0, 1)
	b.kv = kvState{r: &llamaRunner{b: b}, batch: promptBatch}
	tmpl := b.opts.Template
	if tmpl == "" {
		tmpl = l.ChatTemplate(b.model)
	}
	b.template = templateOr(tmpl)
	// The template is tried once here, so that an unknown one fails New
	// rather than the first Chat.
	if _, err := b.render([]chatMessage{{"user", "hi"}}); err != nil {
		return err
	}
	return nil
}

// promptBatch is the most tokens one llama_decode takes: a prompt is
// decoded in batches of it, with ctx checked between them.
const promptBatch = 256

func orUnknown(s string) string { return cmp.Or(s, "llama.cpp logged no reason") }

// Close frees the model and its context. It is safe to call more than
// once.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batch.Token != nil {
		b.lib.BatchFree(b.batch)
		b.batch = llamacpp.Batch{}
	}
	if b.lctx != 0 {
		b.lib.Free(b.lctx)
		b.lctx = 0
	}
	if b.model != 0 {
		b.lib.ModelFree(b.model)
		b.model = 0
	}
	return nil
}

// Name returns "local".
func (b *Backend) Name() string { return "local" }

// ContextSize returns the context window in tokens.
func (b *Backend) ContextSize() int { return b.nctx }

// Library returns the path of the libllama.so in use and the CPU
// features it was built for (llama_print_system_info).
func (b *Backend) Library() (path, systemInfo string) { return b.lib.Path, b.lib.SystemInfo() }

// Chat generates the reply to req with the model, every token masked by
// the request's constraint.
func (b *Backend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	src, defTokens, err := constraintGBNF(req, b.schemas)
	if err != nil {
		return nil, err
	}
	msgs := llm.WithToolPrompt(req)
	maxTokens := cmp.Or(req.MaxTokens, b.opts.MaxTokens, llm.DefaultMaxTokens)
	temp := 0.0
	if t := cmp.Or(req.Temperature, b.opts.Temperature); t != nil {
		temp = *t
	}
	if !(temp >= 0) { // NaN too
		return nil, fmt.Errorf("%w: Temperature %v is negative or not a number", llm.ErrInvalidRequest, temp)
	}
	seed := rand.Uint64()
	if s := cmp.Or(req.Seed, b.opts.Seed); s != nil {
		seed = uint64(*s)
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lctx == 0 {
		return nil, ErrClosed
	}
	eng, err := b.engine(src)
	if err != nil {
		return nil, err
	}
	prompt, err := b.prompt(msgs)
	if err != nil {
		return nil, err
	}
	// The reply gets what the context leaves: a reply cut off there is
	// truncated (FinishLength), which Checked repairs with a shorter one.
	room := b.nctx - len(prompt)
	if room < 1 {
		return nil, b.contextFull(len(prompt))
	}
	maxTokens = min(maxTokens, room)
	reused, err := b.kv.prefill(ctx, prompt)
	if err != nil {
		return nil, b.decodeError(ctx, err)
	}
	if b.sessEng != eng {
		b.sess, b.sessEng = eng.NewSession(), eng
	} else {
		b.sess.Reset()
	}
	g, err := b.kv.generate(ctx, b.sess, b.vocab, sampling{
		temperature: temp, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), maxTokens: maxTokens, onDelta: req.OnDelta,
	})
	if err != nil {
		return nil, b.decodeError(ctx, err)
	}
	text := string(g.text)
	resp := &llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: text},
		Raw:     text,
		Usage: llm.Usage{
			PromptTokens:         len(prompt),
			CompletionTokens:     g.tokens,
			CachedPromptTokens:   reused,
			ToolDefinitionTokens: defTokens,
			CatalogTokens:        req.CatalogTokens,
		},
		FinishReason: g.finish,
	}
	return resp, llm.ParseReply(req, resp)
}

// decodeError is err of a generation, ctx's error when ctx ended.
func (b *Backend) decodeError(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("local: %w", err)
}

// constraintGBNF returns the grammar that masks a reply to req and the
// tokens of the tool definitions it carries.
func constraintGBNF(req *llm.Request, cache *grammar.Cache) (string, int, error) {
	switch req.Constraint.Mode {
	case llm.ModeGrammar:
		return req.Constraint.GBNF, tokens.Estimate(req.Constraint.GBNF) + llm.ToolPromptTokens(req.Tools), nil
	case llm.ModeEnvelope:
		var buf bytes.Buffer
		if err := json.Compact(&buf, req.Constraint.EnvelopeSchema); err != nil {
			return "", 0, fmt.Errorf("%w: Constraint.EnvelopeSchema: %v", llm.ErrInvalidRequest, err)
		}
		res, err := grammar.FromSchema(buf.Bytes(), &grammar.Options{Cache: cache})
		if err != nil {
			return "", 0, &llm.ConstraintError{Backend: "local", Mode: llm.ModeEnvelope,
				Message: "the envelope schema does not compile to a grammar: " + err.Error()}
		}
		return res.GBNF, tokens.Estimate(buf.String()) + llm.ToolPromptTokens(req.Tools), nil
	}
	return "", 0, &llm.ConstraintError{Backend: "local", Mode: req.Constraint.Mode,
		Message: "a local model has no native tool calling; use grammar or envelope mode"}
}

// engine returns the mask engine of the grammar src, prepared once and
// kept (at most maxEngines).
func (b *Backend) engine(src string) (*mask.Engine, error) {
	if e, ok := b.engines[src]; ok {
		return e, nil
	}
	g, err := gbnf.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%w: Constraint.GBNF: %v", llm.ErrInvalidRequest, err)
	}
	e, err := mask.NewEngine(g, b.vocab, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: Constraint.GBNF: %v", llm.ErrInvalidRequest, err)
	}
	if len(b.engines) >= maxEngines {
		clear(b.engines)
	}
	b.engines[src] = e
	return e, nil
}

// prompt renders msgs with the chat template and tokenizes the text, the
// template's special tokens included.
func (b *Backend) prompt(msgs []llm.Message) ([]int32, error) {
	text, err := b.render(chatMessages(msgs))
	if err != nil {
		return nil, err
	}
	return b.tokenize(text)
}

// render applies the chat template to msgs, ending with the assistant's
// turn opened.
func (b *Backend) render(msgs []chatMessage) (string, error) {
	keep := make([]*byte, 0, 2*len(msgs)+1)
	cm := make([]llamacpp.ChatMessage, len(msgs))
	size := 256
	for i, m := range msgs {
		cm[i] = llamacpp.ChatMessage{Role: llamacpp.CString(m.role), Content: llamacpp.CString(m.content)}
		keep = append(keep, cm[i].Role, cm[i].Content)
		size += 2 * (len(m.role) + len(m.content))
	}
	tmpl := llamacpp.CString(b.template)
	for range 2 {
		buf := make([]byte, size)
		n := b.lib.ChatApplyTemplate(tmpl, unsafe.SliceData(cm), uintptr(len(cm)), true, &buf[0], int32(len(buf)))
		if n < 0 {
			return "", fmt.Errorf("%w: llama.cpp does not know the chat template %s; set Options.Template (--template) to one it knows, such as chatml", ErrModel, describeTemplate(b.template))
		}
		if int(n) <= len(buf) {
			runtime.KeepAlive(keep)
			runtime.KeepAlive(tmpl)
			return string(buf[:n]), nil
		}
		size = int(n) + 1
	}
	return "", errors.New("local: the chat template's output kept growing")
}

// contextFull is the error of a prompt of n tokens, too many for the
// context.
func (b *Backend) contextFull(n int) error {
	return fmt.Errorf("%w: the prompt's %d tokens fill the context of %d tokens (Options.ContextSize)",
		llm.ErrInvalidRequest, n, b.nctx)
}

// tokenize turns text into tokens, with the model's BOS and the special
// tokens the chat template wrote. The room it gives llama_tokenize is at
// most the context's and one: a text of more tokens fails (contextFull)
// without them being kept.
func (b *Backend) tokenize(text string) ([]int32, error) {
	if len(text) > 1<<30 {
		return nil, fmt.Errorf("%w: a prompt of %d bytes", llm.ErrInvalidRequest, len(text))
	}
	ctext := llamacpp.CString(text)
	out := make([]int32, min(len(text)+8, b.nctx+1))
	n := b.lib.Tokenize(b.lvocab, ctext, int32(len(text)), unsafe.SliceData(out), int32(len(out)), true, true)
	if n < 0 && -int(n) <= b.nctx+1 {
		out = make([]int32, -int(n))
		n = b.lib.Tokenize(b.lvocab, ctext, int32(len(text)), unsafe.SliceData(out), int32(len(out)), true, true)
	}
	runtime.KeepAlive(ctext)
	switch {
	case n < 0 && -int(n) > b.nctx+1:
		// llama_tokenize says how many tokens the text has, negated
		// (math.MinInt32 when they overflow an int32).
		return nil, b.contextFull(-int(n))
	case n < 0:
		return nil, fmt.Errorf("local: llama_tokenize failed (%d)", n)
	}
	return out[:n], nil
}

// llamaRunner is the runner over the Backend's llama.cpp context.
type llamaRunner struct{ b *Backend }

func (r *llamaRunner) truncate(n int) bool {
	mem := r.b.lib.GetMemory(r.b.lctx)
	if n == 0 {
		r.b.lib.MemoryClear(mem, true)
		return true
	}
	return r.b.lib.MemorySeqRm(mem, 0, int32(n), -1)
}

func (r *llamaRunner) eval(toks []int32) error {
	b := r.b
	if len(toks) > promptBatch {
		return fmt.Errorf("a batch of %d tokens (at most %d)", len(toks), promptBatch)
	}
	pos0 := len(b.kv.cached)
	token := unsafe.Slice(b.batch.Token, len(toks))
	pos := unsafe.Slice(b.batch.Pos, len(toks))
	nseq := unsafe.Slice(b.batch.NSeqID, len(toks))
	seq := unsafe.Slice(b.batch.SeqID, len(toks))
	logits := unsafe.Slice(b.batch.Logits, len(toks))
	for i, t := range toks {
		token[i], pos[i], nseq[i], logits[i] = t, int32(pos0+i), 1, 0
		*seq[i] = 0
	}
	logits[len(toks)-1] = 1
	batch := b.batch
	batch.NTokens = int32(len(toks))
	if rc := b.lib.Decode(b.lctx, batch); rc != 0 {
		return fmt.Errorf("llama_decode of %d tokens at position %d failed (%d): %s", len(toks), pos0, rc, orUnknown(b.lib.LastLog()))
	}
	return nil
}

func (r *llamaRunner) logits() ([]float32, error) {
	p := r.b.lib.GetLogitsIth(r.b.lctx, -1)
	if p == nil {
		return nil, fmt.Errorf("llama_get_logits_ith gave no logits: %s", orUnknown(r.b.lib.LastLog()))
	}
	return unsafe.Slice(p, r.b.vocab.Len()), nil
}
