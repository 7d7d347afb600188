package mask

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/testenv"
)

// benchOutputs are what the model writes in the benchmark: a transfer
// call and an answer with 420 characters of free text (accents, an emoji
// and escapes included), through the finance turn envelope.
var benchOutputs = []string{
	`{"action": "call", "tool": "transfer_funds", "arguments": {"source_account": "ACC-00001", "target_account": "ACC-00002", "amount": 250.75}}`,
	`{"action": "answer", "text": "I moved 250.75 USD from ACC-00001 to ACC-00002. The transfer went through at once and the new balance of the source account is 749.25 USD; the target account now holds 1250.75 USD. If you meant a different amount, tell me and I can issue a refund — but note that refunds above 1000.00 USD need an approval from a person with the \"approvals:grant\" scope. Anything else? 😀\nRégis can check the ledger too."}`,
}

var (
	benchOnce     sync.Once
	benchVocabs   []benchVocab
	benchEnvelope *gbnf.Grammar
)

type benchVocab struct {
	name string
	v    *Vocabulary
}

// benchSetup builds the vocabularies once: TinyLlama's real 32k one when
// the model is present (TOOLGATE_LIVE_MODEL or the engines cache), a
// synthesized 32k one, and a 128k-class one grown from TinyLlama's (or
// from the synthesized one) by merging pairs of its tokens.
func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		var base *Vocabulary
		if p := liveModelPath(); p != "" {
			if f, err := os.Open(p); err == nil {
				base, _ = ReadGGUF(f)
				f.Close()
			}
		}
		if base != nil {
			benchVocabs = append(benchVocabs, benchVocab{"tinyllama-32k", base})
		}
		if base == nil {
			benchVocabs = append(benchVocabs, benchVocab{"synth-32k", synthVocab(b, 1, 32000)})
		}
		benchVocabs = append(benchVocabs, benchVocab{"cl100k", tiktokenVocab(b, "cl100k_base.tiktoken")})
		benchVocabs = append(benchVocabs, benchVocab{"o200k", tiktokenVocab(b, "o200k_base.tiktoken")})
		var tools []grammar.EnvelopeTool
		files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(b), "grammar", "testdata", "schema", "finance_*.json"))
		for _, f := range files {
			schema, _ := os.ReadFile(f)
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "finance_"), ".json")
			tools = append(tools, grammar.EnvelopeTool{Name: name, Schema: json.RawMessage(schema)})
		}
		res, err := grammar.Envelope(tools, nil)
		if err != nil {
			b.Fatal(err)
		}
		benchEnvelope, err = gbnf.Parse(res.GBNF)
		if err != nil {
			b.Fatal(err)
		}
	})
}

// tiktokenVocab is one of OpenAI's byte-level BPE vocabularies that
// tiktoken-go-loader ships (cl100k_base: 100,256 tokens, the base of
// Llama 3's 128k vocabulary; o200k_base: 199,998), token id = rank, plus an
// end token.
func tiktokenVocab(b testing.TB, file string) *Vocabulary {
	ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, r := range ranks {
		n = max(n, r+1)
	}
	pieces := make([][]byte, n+1)
	kinds := make([]Kind, n+1)
	for p, r := range ranks {
		pieces[r] = []byte(p)
	}
	pieces[n], kinds[n] = []byte("<|endoftext|>"), KindEnd
	for i := range pieces[:n] {
		if pieces[i] == nil {
			kinds[i] = KindControl // a gap in the ranks
		}
	}
	v, err := NewVocabulary(pieces, kinds)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// tokenize returns the tokens of text as a constrained model could write
// them: at each step the longest allowed token that text continues with,
// then an end token.
func tokenize(b testing.TB, e *Engine, text string) []int {
	s := e.NewSession()
	allowed := NewBitset(e.vocab.Len())
	var ids []int
	for len(s.Output()) < len(text) {
		s.Fill(allowed)
		best, bestLen := -1, 0
		rest := text[len(s.Output()):]
		for id := range e.vocab.Len() {
			p := e.vocab.Piece(id)
			if allowed.Has(id) && e.vocab.Kind(id) == KindText && len(p) > bestLen && strings.HasPrefix(rest, string(p)) {
				best, bestLen = id, len(p)
			}
		}
		if best < 0 {
			b.Fatalf("no allowed token continues %q at %q", text, rest)
		}
		ids = append(ids, best)
		s.Accept(best)
	}
	for id := range e.vocab.Len() {
		if e.vocab.Kind(id) == KindEnd {
			return append(ids, id)
		}
	}
	return ids
}

// BenchmarkMask times every Fill of the outputs' generations, token by
// token, and reports the per-token p50 and p99 in µs (and the mean as
// ns/op). cold: a new Session per generation (only the Engine is
// prepared); warm: one Session, Reset between generations (its mask cache
// kept, as a runtime keeping a Session per grammar would); noslice: cold
// without the free-text fast path.
func BenchmarkMask(b *testing.B) {
	benchSetup(b)
	for _, bv := range benchVocabs {
		for _, mode := range []string{"cold", "warm", "noslice"} {
			b.Run(bv.name+"/"+mode, func(b *testing.B) {
				e, err := NewEngine(benchEnvelope, bv.v, &Options{NoSlices: mode == "noslice"})
				if err != nil {
					b.Fatal(err)
				}
				var gens [][]int
				tokens := 0
				for _, out := range benchOutputs {
					ids := tokenize(b, e, out)
					gens = append(gens, ids)
					tokens += len(ids)
				}
				allowed := NewBitset(bv.v.Len())
				times := make([]time.Duration, 0, b.N*tokens)
				cpu := make([]time.Duration, 0, b.N*tokens)
				warm := e.NewSession()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for _, ids := range gens {
						s := warm
						if mode == "warm" {
							s.Reset()
						} else {
							s = e.NewSession()
						}
						for _, id := range ids {
							t0, c0 := time.Now(), threadCPU()
							s.Fill(allowed)
							cpu = append(cpu, time.Duration(threadCPU()-c0))
							times = append(times, time.Since(t0))
							if err := s.Accept(id); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				b.StopTimer()
				slices.Sort(times)
				slices.Sort(cpu)
				var sum time.Duration
				for _, d := range times {
					sum += d
				}
				q := func(d []time.Duration, p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / 1e3 }
				b.ReportMetric(q(times, 0.50), "p50-µs")
				b.ReportMetric(q(times, 0.99), "p99-µs")
				b.ReportMetric(q(cpu, 0.50), "cpu-p50-µs")
				b.ReportMetric(q(cpu, 0.99), "cpu-p99-µs")
				b.ReportMetric(float64(sum)/float64(len(times)), "ns/token")
				b.ReportMetric(float64(tokens), "tokens/gen")
			})
		}
	}
}

// BenchmarkPrepare times [NewEngine] for the finance envelope once the
// vocabulary's trie is built: "first" is the first grammar over the
// vocabulary (its character classes' token sets computed), "shared" a
// later one (the classes found, shared). [BenchmarkTrie] times the trie.
func BenchmarkPrepare(b *testing.B) {
	benchSetup(b)
	for _, bv := range benchVocabs {
		for _, mode := range []string{"first", "shared"} {
			b.Run(bv.name+"/"+mode, func(b *testing.B) {
				bv.v.theTrie()
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if mode == "first" {
						bv.v.mu.Lock()
						bv.v.slices = nil
						bv.v.mu.Unlock()
					}
					if _, err := NewEngine(benchEnvelope, bv.v, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkTrie(b *testing.B) {
	benchSetup(b)
	for _, bv := range benchVocabs {
		b.Run(bv.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				bv.v.buildTrie()
			}
			b.ReportMetric(float64(len(bv.v.theTrie().edge)), "nodes")
		})
	}
}

// BenchmarkReadGGUF reads TinyLlama's vocabulary from its GGUF file (the
// metadata only, 32,000 tokens; the tensors are not read).
func BenchmarkReadGGUF(b *testing.B) {
	p := liveModel(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ReadGGUF(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
