// Package chat is the transfer example's chat command: the agent over the
// finance tools and the demo's MCP catalogs, talking to one model backend.
//
// The backends that need a vendor SDK (Ollama, OpenAI, Anthropic) are not
// linked here: a program passes the ones it links in [Options.Backends],
// and [Run] hands a request for any other to that backend's own program
// ([Programs]), so that the guided demo, which runs a scripted model,
// compiles no SDK (docs/example.md, "Model backends are programs").
package chat

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/examples/transfer/internal/agent"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/mcp"
)

// Default models per backend. Anthropic's and the Responses API's run
// native mode with deferred loading, so theirs support tool search: at
// its launch Anthropic listed Claude Opus 4.5 and Sonnet 4.5, OpenAI
// gpt-5.4 and later. A model that refuses it still works: the session
// falls back to plain tools ([runtime.EventDeferredOff]) with a warning.
const (
	DefaultOllamaModel    = "qwen3:8b"
	DefaultOpenAIModel    = "gpt-4.1-mini"
	DefaultResponsesModel = "gpt-5.4"
	DefaultAnthropicModel = "claude-sonnet-4-5"
)

// chatConfig is chat's parsed command line.
type chatConfig struct {
	backend, model string
	// library is --library: libllama.so for --backend local ("":
	// $TOOLGATE_LIBLLAMA).
	library string
	// api is --api: "chat" (Chat Completions, the default) or
	// "responses" (OpenAI's Responses API), for --backend openai.
	api string
	// offerUnconnected is --offer-unconnected: the demo catalog's tools
	// without a connected MCP server are offered to the model too (a
	// call of one is refused SERVER_NOT_CONNECTED).
	offerUnconnected    bool
	principal           tools.Principal
	approver            tools.Principal
	data, approve, once string
	script              string
	cards               []string // card overlays (tools/cards) for the catalogs
	verbose             bool
	// mode is --mode; "" means the backend's default (see chatBackend).
	mode string
	// temperature and seed are --temperature and --seed; nil means the
	// server's default.
	temperature *float64
	seed        *int64
	// mcpCommands, mcpURLs and mcpConfig are --mcp, --mcp-url and
	// --mcp-config: real MCP servers connected behind the demo catalog.
	mcpCommands, mcpURLs multiFlag
	// mcpPassEnv is --mcp-pass-env: variables the --mcp servers get.
	mcpPassEnv multiFlag
	mcpConfig  string
	// discoveryLog is --discovery-log: the JSON Lines file the discovery
	// log is appended to ("": none).
	discoveryLog string
	// embed is the --embed-* flags: discovery's embedding model tier,
	// and embedModel what they ask for (nil: none).
	embed      embedflags.Flags
	embedModel *discovery.ModelOptions
	// pins and unpinned are --pins and --unpinned: the lock of reviewed
	// upstream tool definitions (toolgate mcp pin) and the policy for a
	// tool it does not pin.
	pins     string
	unpinned mcp.Unpinned
	// deferred is set by chatBackend for Anthropic and the Responses API
	// in native mode: hosted deferred loading ([runtime.Options.Deferred]).
	deferred bool
	// strictSchemas is set by chatBackend for the OpenAI API, whose
	// response_format needs every schema in strict form.
	strictSchemas bool
	// contextTokens is set by chatBackend for a llama.cpp server (the
	// window its /props reports) and for an Ollama model with a num_ctx
	// parameter (ollama.Backend.ContextSize), so the runtime leaves the
	// oldest turns out of a request that would not fit
	// ([runtime.Options.FitContext], counting with [SmallVocabTokens]).
	contextTokens int
	// opts is what the program gave Run.
	opts *Options
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// runChat is the agent over the finance tools plus the real MCP catalogs:
//
//	transfer chat --backend scripted|ollama|openai|anthropic|local [--api chat|responses] [--model M] [--library FILE]
//	    --principal P --tenant T --scopes a,b [--mode grammar|envelope|native] [--temperature T] [--seed N]
//	    [--mcp "[NAME=]CMD ARGS"] [--mcp-pass-env NAME,...] [--mcp-url [NAME=]URL] [--mcp-config FILE]
//	    [--pins FILE [--unpinned quarantine|allow|refuse]]
//	    [--data DIR] [--approve never|prompt] [--approver NAME]
//	    [--once "request"] [--script FILE] [--cards FILE]... [--offer-unconnected] [-v]
//
// ollama runs in envelope mode by default (the turn envelope as Ollama's
// JSON-Schema format; OLLAMA_HOST); openai (OPENAI_API_KEY, OPENAI_BASE_URL
// for OpenAI-compatible servers) speaks Chat Completions, in grammar mode
// when the server is llama.cpp's (its /props endpoint says so: a weak local
// model needs the GBNF), else in native mode with strict function tools;
// local runs the GGUF model file --model names inside the chat program
// (llama.cpp's library, --library or TOOLGATE_LIBLLAMA, loaded without
// cgo), in grammar mode, every token masked by toolgate's own engine;
// --api responses speaks OpenAI's Responses API instead, and anthropic the
// Messages API, both in native mode with hosted deferred loading (every
// authorized tool deferred, loaded by toolgate's search); --mode
// overrides. scripted plays --script FILE (JSON Lines, see [ParseScript]) or
// a built-in script. The demo catalog's MCP tools have no server behind
// them: they are registered (the count is printed) but not offered to the
// model, unless --offer-unconnected offers them for discovery at scale (a
// call of one is then refused SERVER_NOT_CONNECTED); --mcp, --mcp-url and
// --mcp-config connect real servers (as in the toolgate CLI), whose tools
// replace the catalog's entries of the same namespace. Without --once it
// reads one request per line from
// stdin until EOF or "exit". Calls the gateway holds for approval are
// refused with no approver (--approve never, the default) or put to the terminal (prompt),
// where the approving human acts as --approver, a second principal holding
// approvals:grant.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts *Options) int {
	cfg, err := parseChat(args, stdout, opts)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK // parseChat printed the usage
	}
	if err != nil {
		fmt.Fprintf(stderr, "transfer chat: %v\n", err)
		return exitUsage
	}
	if _, linked := opts.Backends[cfg.backend]; !linked && cfg.backend != "scripted" {
		return runProgram(ctx, cfg.backend, args, stdout, stderr, opts)
	}
	backend, mode, err := chatBackend(ctx, cfg)
	if err == nil {
		cfg.embedModel, err = cfg.embed.Options(stderr, opts.Embedders)
	}
	if err != nil {
		fmt.Fprintf(stderr, "transfer chat: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := chat(ctx, cfg, backend, mode, stdout); err != nil {
		fmt.Fprintf(stderr, "transfer chat: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// parseChat reads chat's flags; for -h or --help it prints the usage on
// stdout and returns [flag.ErrHelp].
func parseChat(args []string, stdout io.Writer, opts *Options) (*chatConfig, error) {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := &chatConfig{opts: opts}
	var tenant, scopes, approver string
	fs.StringVar(&cfg.backend, "backend", "", "scripted, ollama, openai, anthropic or local")
	fs.StringVar(&cfg.model, "model", "", "model name (default "+DefaultOllamaModel+" for ollama, "+DefaultOpenAIModel+" for openai, "+
		DefaultResponsesModel+" for openai --api responses, "+DefaultAnthropicModel+" for anthropic; the GGUF file for local)")
	fs.StringVar(&cfg.library, "library", "", "llama.cpp's libllama.so `file` for --backend local (default $TOOLGATE_LIBLLAMA)")
	fs.StringVar(&cfg.api, "api", "chat", "the OpenAI API for --backend openai: chat (Chat Completions) or responses (the Responses API, with hosted tool search)")
	fs.BoolVar(&cfg.offerUnconnected, "offer-unconnected", false, "also offer the demo catalog's tools that have no MCP server connected (their calls are refused)")
	fs.StringVar(&cfg.principal.ID, "principal", "", "who the agent acts for")
	fs.StringVar(&tenant, "tenant", "", "the principal's tenant")
	fs.StringVar(&scopes, "scopes", "", "the principal's scopes, comma-separated")
	fs.StringVar(&cfg.data, "data", "", "data folder for ledger.db and gateway.db (default: a temporary folder removed at exit)")
	fs.StringVar(&cfg.approve, "approve", "never", "calls held for approval: never (no approver: refused, and the model is told so) or prompt (asked on the terminal)")
	fs.StringVar(&approver, "approver", "operator", "the principal who approves at the prompt (holds approvals:grant)")
	fs.StringVar(&cfg.once, "once", "", "run this one request and exit")
	fs.StringVar(&cfg.script, "script", "", "JSON Lines of scripted replies (--backend scripted)")
	fs.BoolVar(&cfg.verbose, "v", false, "print the shortlist's scores, the constraint and token usage")
	fs.Func("cards", "card overlay `file` for the catalogs (JSON Lines, tools/cards); repeatable", func(f string) error {
		cfg.cards = append(cfg.cards, f)
		return nil
	})
	fs.StringVar(&cfg.mode, "mode", "", "grammar, envelope or native (default: grammar for a llama.cpp server and for local, native for other openai servers, envelope for ollama)")
	var temperature, seed string
	fs.StringVar(&temperature, "temperature", "", "sampling temperature, e.g. 0 (default: the server's)")
	fs.StringVar(&seed, "seed", "", "sampling seed, for repeatable runs (default: none)")
	fs.Var(&cfg.mcpCommands, "mcp", "upstream MCP server over stdio, as \"CMD ARGS\" or \"NAME=CMD ARGS\"; repeatable")
	fs.Var(&cfg.mcpPassEnv, "mcp-pass-env", "`NAME`s of environment variables to pass to every --mcp server (a token it reads), comma-separated; repeatable")
	fs.Var(&cfg.mcpURLs, "mcp-url", "upstream MCP server over Streamable HTTP, as URL or NAME=URL; repeatable")
	fs.StringVar(&cfg.discoveryLog, "discovery-log", "", "append each discovery query and each tool then called to `FILE` (JSON Lines, created 0600), for toolgate log misses and cards learn")
	fs.StringVar(&cfg.mcpConfig, "mcp-config", "", "JSON file of upstream MCP servers with scopes and overrides, or another MCP client's list of them (Claude Desktop's, Cursor's, Claude Code's, VS Code's, Cline's, Roo Code's, Windsurf's, Zed's settings.json)")
	fs.StringVar(&cfg.pins, "pins", "", "lock `file` of pinned upstream tool definitions (toolgate mcp pin): a tool whose definition differs is quarantined")
	cfg.embed.Register(fs)
	var unpinned string
	fs.StringVar(&unpinned, "unpinned", "", "with --pins, a listed tool the lock does not pin is quarantined (default), allow (registered) or refuse (chat does not start)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			cli.PrintUsage(stdout, fs, opts.Usage)
		}
		return nil, err
	}
	if temperature != "" {
		v, err := strconv.ParseFloat(temperature, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("--temperature %q: want a number >= 0", temperature)
		}
		cfg.temperature = &v
	}
	if seed != "" {
		v, err := strconv.ParseInt(seed, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seed %q: want an integer", seed)
		}
		cfg.seed = &v
	}
	if unpinned != "" && cfg.pins == "" {
		return nil, fmt.Errorf("--unpinned needs --pins")
	}
	var err error
	if cfg.unpinned, err = mcp.ParseUnpinned(unpinned); err != nil {
		return nil, fmt.Errorf("--unpinned %q: want quarantine, allow or refuse", unpinned)
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.backend == "":
		return nil, fmt.Errorf("--backend scripted|ollama|openai|anthropic|local is required")
	case cfg.backend != "scripted" && cfg.backend != "ollama" && cfg.backend != "openai" && cfg.backend != "anthropic" && cfg.backend != "local":
		return nil, fmt.Errorf("--backend %q: want scripted, ollama, openai, anthropic or local", cfg.backend)
	case cfg.backend == "local" && cfg.model == "":
		return nil, fmt.Errorf("--backend local needs --model FILE.gguf, the model to run in process")
	case cfg.library != "" && cfg.backend != "local":
		return nil, fmt.Errorf("--library needs --backend local")
	case cfg.backend == "local" && cfg.mode == "native":
		return nil, fmt.Errorf("--mode native needs a server with tool calling: a local model runs in grammar or envelope mode")
	case cfg.principal.ID == "" || tenant == "":
		return nil, fmt.Errorf("--principal and --tenant are required")
	case cfg.approve != "never" && cfg.approve != "prompt":
		return nil, fmt.Errorf("--approve %q: want never or prompt", cfg.approve)
	case approver == "" || approver == cfg.principal.ID:
		return nil, fmt.Errorf("--approver must name a second principal, not %q", approver)
	case cfg.script != "" && cfg.backend != "scripted":
		return nil, fmt.Errorf("--script needs --backend scripted")
	case cfg.once == "" && isFlagSet(fs, "once"):
		return nil, fmt.Errorf("--once needs a request")
	case cfg.mode != "" && cfg.mode != "grammar" && cfg.mode != "envelope" && cfg.mode != "native":
		return nil, fmt.Errorf("--mode %q: want grammar, envelope or native", cfg.mode)
	case cfg.mode == "grammar" && (cfg.backend == "ollama" || cfg.backend == "anthropic"):
		return nil, fmt.Errorf("--mode grammar needs a llama.cpp server (--backend openai): the %s API takes no GBNF grammar", cfg.backend)
	case cfg.api != "chat" && cfg.api != "responses":
		return nil, fmt.Errorf("--api %q: want chat or responses", cfg.api)
	case cfg.api == "responses" && cfg.backend != "openai":
		return nil, fmt.Errorf("--api responses needs --backend openai")
	case cfg.api == "responses" && cfg.mode == "grammar":
		return nil, fmt.Errorf("--mode grammar needs a llama.cpp server: the Responses API takes no GBNF grammar")
	}
	cfg.principal.Tenant = tenant
	for s := range strings.SplitSeq(scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.principal.Scopes = append(cfg.principal.Scopes, s)
		}
	}
	cfg.approver = tools.Principal{ID: approver, Tenant: tenant, Scopes: []string{"approvals:grant"}}
	return cfg, nil
}

func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// chatBackend builds the model backend and the mode the agent runs it in:
// the scripted model, or one of the program's [Options.Backends].
func chatBackend(ctx context.Context, cfg *chatConfig) (llm.Backend, llm.Mode, error) {
	if b, ok := cfg.opts.Backends[cfg.backend]; ok {
		s, err := b(ctx, Flags{Model: cfg.model, API: cfg.api, Mode: cfg.mode, Temperature: cfg.temperature, Seed: cfg.seed, Library: cfg.library})
		if err != nil {
			return nil, 0, err
		}
		cfg.model, cfg.deferred, cfg.strictSchemas, cfg.contextTokens = s.Model, s.Deferred, s.StrictSchemas, s.ContextTokens
		return s.Backend, s.Mode, nil
	}
	cfg.model = "built-in script"
	replies := builtinScript()
	if cfg.script != "" {
		cfg.model = cfg.script
		f, err := os.Open(cfg.script)
		if err != nil {
			return nil, 0, fmt.Errorf("--script: %v", err)
		}
		defer f.Close()
		if replies, err = ParseScript(f, cfg.script); err != nil {
			return nil, 0, err
		}
	}
	return scripted.New(replies, nil), ModeOr(cfg.mode, llm.ModeEnvelope), nil
}

// SmallVocabTokens is the runtime's token estimate for a llama.cpp
// server's model: the o200k count and a third more, about what a
// 32,000-word vocabulary such as Llama 2's (TinyLlama's) takes for the
// same prompt (docs/benchmarks.md, "Fitting the context").
func SmallVocabTokens(text string) int {
	n := tokens.Estimate(text)
	return n + n/3
}

// ModeOr is the mode a --mode flag names, or def when it is not given.
func ModeOr(flag string, def llm.Mode) llm.Mode {
	switch flag {
	case "grammar":
		return llm.ModeGrammar
	case "envelope":
		return llm.ModeEnvelope
	case "native":
		return llm.ModeNative
	}
	return def
}

// builtinScript is what --backend scripted plays without --script,
// whatever the requests say: a transfer of 25.00 USD from ACC-00001 to
// ACC-00002, then a balance check of ACC-00001.
func builtinScript() []scripted.Reply {
	return []scripted.Reply{
		scripted.Call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":25.00}`),
		scripted.Answer("Sent 25.00 USD from ACC-00001 to ACC-00002."),
		scripted.Call("get_balance", `{"account":"ACC-00001"}`),
		scripted.Answer("The balance of ACC-00001 is in the tool result above."),
	}
}

// scriptLine is one line of a --script file: exactly one of its fields.
type scriptLine struct {
	Call      *string         `json:"call"`
	Arguments json.RawMessage `json:"arguments"`
	Answer    *string         `json:"answer"`
	FindTools *string         `json:"find_tools"`
	Text      *string         `json:"text"`
}

// ParseScript reads a --script file: JSON Lines, one model reply per line,
// played in order, one per model request:
//
//	{"call":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5}}
//	{"answer":"Sent 5.00 USD."}
//	{"find_tools":"refund a payment"}
//	{"text":"raw model output, verbatim (malformed or hostile replies)"}
//
// Blank lines and lines starting with # are skipped. Errors read
// "FILE:LINE: reason".
func ParseScript(r io.Reader, name string) ([]scripted.Reply, error) {
	var out []scripted.Reply
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var l scriptLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		set := 0
		for _, p := range []*string{l.Call, l.Answer, l.FindTools, l.Text} {
			if p != nil {
				set++
			}
		}
		if set != 1 {
			return nil, fmt.Errorf("%s:%d: want exactly one of call, answer, find_tools, text", name, n)
		}
		switch {
		case l.Call != nil:
			args := l.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			if !json.Valid(args) || args[0] != '{' {
				return nil, fmt.Errorf("%s:%d: arguments must be a JSON object", name, n)
			}
			out = append(out, scripted.Call(*l.Call, string(args)))
		case l.Arguments != nil:
			return nil, fmt.Errorf("%s:%d: arguments belong to a call", name, n)
		case l.Answer != nil:
			out = append(out, scripted.Answer(*l.Answer))
		case l.FindTools != nil:
			out = append(out, scripted.FindTools(*l.FindTools))
		default:
			out = append(out, scripted.Text(*l.Text))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the script has no replies", name)
	}
	return out, nil
}

// chat opens the bank and runs the conversation.
func chat(ctx context.Context, cfg *chatConfig, backend llm.Backend, mode llm.Mode, w io.Writer) (err error) {
	dir := cfg.data
	if dir == "" {
		if dir, err = os.MkdirTemp("", "toolgate-transfer-chat-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	servers, err := mcp.Flags{Commands: cfg.mcpCommands, PassEnv: cfg.mcpPassEnv, URLs: cfg.mcpURLs, Config: cfg.mcpConfig}.Servers()
	if err != nil {
		return err
	}
	catalog, err := DemoCatalog(cfg.opts.Catalogs, servers)
	if err != nil {
		return err
	}
	// The overlays apply to every tool: the finance tools, the demo
	// catalog and what connected servers list (each re-listing too).
	var overlay func([]tools.Tool) []tools.Tool
	var ov *cards.Overlay
	if len(cfg.cards) > 0 {
		if ov, err = cards.Load(cfg.cards...); err != nil {
			return err
		}
		overlay = ov.Transform
	}
	dopts := discovery.Options{Model: cfg.embedModel}
	if cfg.discoveryLog != "" {
		l, lerr := discovery.OpenJSONLog(cfg.discoveryLog)
		if lerr != nil {
			return lerr
		}
		defer func() { err = errors.Join(err, l.Close()) }()
		dopts.Log = l
	}
	in := newLineReader(cfg.opts.Stdin)
	defer in.Close()
	p := &stepPrinter{w: w, verbose: cfg.verbose}
	b, err := agent.Open(ctx, dir, backend, &agent.Options{Catalog: catalog, Transform: overlay, Discovery: &dopts,
		Runtime: &runtime.Options{Mode: mode, StrictSchemas: cfg.strictSchemas, Deferred: cfg.deferred, Observer: p.observe, Approver: chatApprover(cfg, in, w),
			FitContext: cfg.contextTokens > 0, ContextTokens: cfg.contextTokens, CountTokens: SmallVocabTokens,
			Filter: offered(catalog, cfg.offerUnconnected)}})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	// With --embed-model, the demo catalog's cards before the first turn
	// (a failure is warned about; the built-in ranking answers).
	_ = b.Discovery.EmbedCatalog(ctx, b.Registry.Snapshot())
	var lock *mcp.Lock
	if cfg.pins != "" {
		if lock, err = mcp.LoadLock(cfg.pins); err != nil {
			return err
		}
	}
	quiet := slog.New(slog.DiscardHandler)
	for _, s := range servers {
		u, err := mcp.Connect(ctx, b.Registry, s, &mcp.Options{Logger: quiet, Transform: overlay, Pins: lock, Unpinned: cfg.unpinned})
		if err != nil {
			return err
		}
		defer u.Close()
		for _, q := range u.Quarantined() {
			// The name is the server's text: quoted.
			fmt.Fprintf(w, "warning: %s/%q quarantined by --pins (%s); review and re-pin with toolgate mcp pin\n", s.Name, q.Tool, q.Reason)
		}
	}

	snap := b.Registry.Snapshot()
	if ov != nil {
		// Stale and unknown entries, once every tool is registered.
		for _, p := range ov.Check(snap).Problems() {
			fmt.Fprintf(w, "warning: %s\n", termtext.Line(p.String()))
		}
	}
	view := snap.Authorize(cfg.principal)
	switch n := len(catalog); {
	case n > 0 && cfg.offerUnconnected:
		fmt.Fprintf(w, "chat: %d catalog tools have no MCP server connected: a call of one is refused %s (connect servers with --mcp, --mcp-url or --mcp-config).\n", n, codeServerNotConnected)
	case n > 0:
		fmt.Fprintf(w, "chat: %d catalog tools have no MCP server connected and are not offered to the model (connect servers with --mcp, --mcp-url or --mcp-config; --offer-unconnected offers them).\n", n)
	}
	var nb [8]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return err
	}
	id := "chat-" + hex.EncodeToString(nb[:])
	backendName := cfg.backend
	if cfg.api == "responses" {
		backendName += " (Responses API)"
	}
	fmt.Fprintf(w, "chat: %s (tenant %s, scopes %s) may use %d of %d tools; backend %s (%s, %s mode).\n",
		cfg.principal.ID, cfg.principal.Tenant, orNone(strings.Join(cfg.principal.Scopes, ",")), view.Len(), snap.Len(),
		backendName, cfg.model, mode)
	if cfg.verbose {
		fmt.Fprintf(w, "chat: session %s, data %s, approvals: %s.\n", id, dir, cfg.approve)
	}
	sess := b.Agent.NewSession(cfg.principal, id, nil)

	if cfg.once != "" {
		return p.turn(ctx, sess, cfg.once)
	}
	for {
		fmt.Fprint(w, "> ")
		line, rerr := in.Next(ctx)
		if ctx.Err() != nil {
			// Interrupted at the prompt: a clean exit.
			fmt.Fprintln(w)
			return nil
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "exit" || line == "quit":
			return nil
		case line != "":
			if err := p.turn(ctx, sess, line); err != nil {
				if ctx.Err() != nil {
					return err
				}
				fmt.Fprintf(w, "error: %v\n", err)
			}
		}
		if rerr != nil {
			fmt.Fprintln(w)
			if rerr == io.EOF {
				return nil
			}
			return rerr
		}
	}
}

// codeServerNotConnected is the DomainError code of a call of a demo
// catalog tool whose MCP server is not connected: the code the gateway
// gives a tool without a handler, which toolgate serve and mcp serve
// answer for a catalog file's tools.
const codeServerNotConnected = gateway.CodeServerNotConnected

// DemoCatalog is the embedded catalogs (load) less the namespaces a connected
// server takes (its live tools replace them). The entries left have no
// server behind them; each gets a handler that refuses every call with a
// [*tools.DomainError] coded SERVER_NOT_CONNECTED, which the gateway records
// and the model reads as the tool's result, so the catalog still shows
// discovery at scale and a call of it says plainly why it cannot run.
func DemoCatalog(load func() ([]tools.Tool, error), servers []mcp.Server) ([]tools.Tool, error) {
	catalog, err := load()
	if err != nil {
		return nil, err
	}
	catalog = slices.DeleteFunc(catalog, func(t tools.Tool) bool {
		return slices.ContainsFunc(servers, func(s mcp.Server) bool { return s.Name == t.Namespace() })
	})
	for i := range catalog {
		if catalog[i].Handler == nil {
			catalog[i].Handler = notConnected(catalog[i].Namespace())
		}
	}
	return catalog, nil
}

// offered is the runtime's Filter for chat: a tool of catalog (the demo
// catalog's tools without a connected server, which cannot execute) is not
// offered to the model, unless all is set (--offer-unconnected). nil when
// it would keep every tool.
func offered(catalog []tools.Tool, all bool) func(*tools.Tool) bool {
	if all || len(catalog) == 0 {
		return nil
	}
	unconnected := make(map[string]bool, len(catalog))
	for _, t := range catalog {
		unconnected[t.ID] = true
	}
	return func(t *tools.Tool) bool { return !unconnected[t.ID] }
}

func notConnected(server string) tools.Handler {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, &tools.DomainError{Code: codeServerNotConnected,
			Message: fmt.Sprintf("the MCP server %q is not connected, so its tools cannot run; connect it with --mcp, --mcp-url or --mcp-config", server)}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// chatApprover is the Approver of --approve: never is none (no human is
// asked, and the runtime tells the model so); prompt asks on the terminal,
// reading the answer from in, and approves as cfg.approver.
func chatApprover(cfg *chatConfig, in *lineReader, w io.Writer) runtime.Approver {
	if cfg.approve == "never" {
		return nil
	}
	return runtime.ApproverFunc(func(ctx context.Context, req runtime.ApprovalRequest) (tools.Principal, bool, error) {
		// A human decides on this line: nothing the model wrote may
		// rewrite it (a "\r" or a bidi control in the arguments).
		fmt.Fprintf(w, "  approval needed: %s asks %s %s\n    %s\n", termtext.Line(req.Principal.ID), termtext.Line(req.Tool),
			termtext.Line(string(req.Arguments)), termtext.Line(req.Reason))
		fmt.Fprintf(w, "    approve as %s? [y/N] ", cfg.approver.ID)
		line, err := in.Next(ctx)
		if err != nil && line == "" {
			fmt.Fprintln(w)
			if err == io.EOF {
				return tools.Principal{}, false, nil
			}
			return tools.Principal{}, false, err
		}
		answer := strings.ToLower(strings.TrimSpace(line))
		return cfg.approver, answer == "y" || answer == "yes", ctx.Err()
	})
}

// lineReader reads stdin one line per Next call on its own goroutine, so
// that a Ctrl-C (ctx ending) at a prompt is not stuck behind a blocked
// read. It reads only when asked: what a command does not consume stays
// unread.
type lineReader struct {
	req  chan struct{}
	resp chan lineResult
}

type lineResult struct {
	line string
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	l := &lineReader{req: make(chan struct{}), resp: make(chan lineResult, 1)}
	go func() {
		br := bufio.NewReader(r)
		for range l.req {
			line, err := br.ReadString('\n')
			l.resp <- lineResult{line, err}
		}
	}()
	return l
}

// Next returns the next line (with its newline, if any) or the read's
// error; ctx's error when ctx ends first.
func (l *lineReader) Next(ctx context.Context) (string, error) {
	select {
	case l.req <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case r := <-l.resp:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Close ends the reading goroutine once its current read, if any, returns.
func (l *lineReader) Close() { close(l.req) }

// stepPrinter prints a turn as the runtime reports it: per step the tools
// shown and their tokens against the authorized catalog's, the calls and
// their outcomes; then the answer.
type stepPrinter struct {
	w       io.Writer
	verbose bool
}

func (p *stepPrinter) turn(ctx context.Context, sess *runtime.Session, input string) error {
	turn, err := sess.Run(ctx, input)
	if err != nil {
		return err
	}
	fmt.Fprintln(p.w, termtext.Text(turn.Answer))
	if p.verbose {
		fmt.Fprintf(p.w, "  (%d steps, %d calls; tokens: prompt %d, completion %d, tool definitions %d)\n",
			turn.Steps, len(turn.Calls), turn.Usage.PromptTokens, turn.Usage.CompletionTokens, turn.Usage.ToolDefinitionTokens)
	}
	return nil
}

func (p *stepPrinter) observe(_ context.Context, e runtime.Event) {
	switch e.Kind {
	case runtime.EventShortlist:
		names := make([]string, len(e.Tools))
		for i, id := range e.Tools {
			names[i] = termtext.Line(id[strings.IndexByte(id, '/')+1:])
		}
		fmt.Fprintf(p.w, "  step %d: %d of %d tools shown, %d of %d tokens: %s\n", e.Step, len(e.Tools), e.Authorized,
			e.ShortlistTokens, e.CatalogTokens, strings.Join(names, ", "))
		if p.verbose && e.Shortlist != nil {
			fmt.Fprintf(p.w, "    strategy %s; scores:", e.Strategy)
			for _, c := range e.Shortlist.Candidates {
				fmt.Fprintf(p.w, " %s %.3f", termtext.Line(c.Tool.ID), c.Score)
			}
			fmt.Fprintln(p.w)
		}
	case runtime.EventConstraint:
		if p.verbose {
			switch c := e.Constraint; c.Mode {
			case llm.ModeEnvelope:
				fmt.Fprintf(p.w, "    constraint: the turn envelope as JSON Schema, %d bytes\n", len(c.EnvelopeSchema))
			case llm.ModeGrammar:
				fmt.Fprintf(p.w, "    constraint: the turn envelope as GBNF, %d bytes\n", len(c.GBNF))
			default:
				fmt.Fprintln(p.w, "    constraint: native strict function tools")
			}
		}
	case runtime.EventDeferredOff:
		// The server's reason is data: quoted, never raw on the terminal.
		fmt.Fprintf(p.w, "warning: the model refused deferred tool loading (%q); sending each step's shortlist as native tools\n", e.Reason)
	case runtime.EventTrimmed:
		fmt.Fprintf(p.w, "  step %d: the %d oldest messages are left out to fit the context (about %d prompt tokens + %d for the reply)\n",
			e.Step, e.Omitted, e.PromptTokens, e.ReplyTokens)
	case runtime.EventReply:
		if p.verbose && e.Response.Action != llm.ActionAnswer {
			raw := e.Response.Raw
			if raw == "" {
				data, _ := json.Marshal(e.Response.Calls)
				raw = string(data)
			}
			fmt.Fprintf(p.w, "    model: %s\n", termtext.Line(raw))
		}
	case runtime.EventFindTools:
		fmt.Fprintf(p.w, "  step %d: find_tools %q found %s\n", e.Step, e.Query, termtext.Line(strings.Join(e.Found, ", ")))
	case runtime.EventApproval:
		fmt.Fprintf(p.w, "  step %d: approval %s: approved=%v\n", e.Step, termtext.Line(e.Approval.ApprovalID), e.Approved)
	case runtime.EventRepeatedCall:
		if e.Repeat == runtime.RepeatRefused {
			fmt.Fprintf(p.w, "  step %d: call %s %s not executed again: it already succeeded at step %d\n", e.Step, termtext.Line(e.Tool), termtext.Line(string(e.Arguments)), e.RepeatOf)
		} else {
			fmt.Fprintf(p.w, "  step %d: call %s %s repeats step %d's (%s)\n", e.Step, termtext.Line(e.Tool), termtext.Line(string(e.Arguments)), e.RepeatOf, e.Repeat)
		}
	case runtime.EventCall:
		outcome := "ok " + string(e.Result)
		if e.Cached {
			outcome = "replayed (cached) " + string(e.Result)
		}
		if e.Err != nil {
			var ge *gateway.Error
			if errors.As(e.Err, &ge) {
				outcome = fmt.Sprintf("refused %s: %s", ge.Type, ge.Message)
			} else {
				outcome = "failed: " + e.Err.Error()
			}
		}
		fmt.Fprintf(p.w, "  step %d: call %s %s -> %s\n", e.Step, termtext.Line(e.Tool), termtext.Line(string(e.Arguments)), termtext.Line(outcome))
	}
}
