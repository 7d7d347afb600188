package discovery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

func newDiscoverer(tb testing.TB, opts *discovery.Options) *discovery.Discoverer {
	tb.Helper()
	d, err := discovery.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// editedLexicon builds the embedded lexicon from its sources as edit
// leaves them.
func editedLexicon(t *testing.T, edit func(*lexicon.Source)) *lexicon.Lexicon {
	t.Helper()
	src, err := lexicon.DefaultSource()
	if err != nil {
		t.Fatal(err)
	}
	edit(src)
	lex, err := lexicon.Build(src)
	if err != nil {
		t.Fatal(err)
	}
	return lex
}

func tool(id, summary string, scopes ...string) tools.Tool {
	_, name, _ := strings.Cut(id, "/")
	return tools.Tool{ID: id, Description: summary, Card: tools.Card{Name: name, Summary: summary, Scopes: scopes}}
}

var everyone = tools.Principal{ID: "u1", Tenant: "t1"}

func ids(sl *discovery.Shortlist) []string {
	out := make([]string, len(sl.Candidates))
	for i, c := range sl.Candidates {
		out[i] = c.Tool.ID
	}
	return out
}

// TestShortlistNeverReturnsUnauthorized is security invariant 1 as a
// property: over random catalogs, principals and requests, every returned
// tool is one the principal may use, and Evaluate counts no leak.
func TestShortlistNeverReturnsUnauthorized(t *testing.T) {
	words := []string{"send", "email", "invoice", "refund", "payment", "account", "balance", "issue", "close", "file",
		"read", "write", "delete", "user", "report", "search", "transfer", "money", "ticket", "list"}
	scopes := []string{"a", "b", "c", "d", "e"}
	tenants := []string{"t1", "t2", "t3"}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(list []string, n int) []string {
		out := make([]string, 0, n)
		for range n {
			out = append(out, list[r.IntN(len(list))])
		}
		return out
	}
	for round := range 30 {
		var ts []tools.Tool
		for i := range 20 + r.IntN(200) {
			tl := tool(fmt.Sprintf("ns%d/tool_%d_%s", i%4, i, strings.Join(pick(words, 2), "_")), strings.Join(pick(words, 6), " "), pick(scopes, r.IntN(3))...)
			if r.IntN(4) == 0 {
				tl.Tenants = pick(tenants, 1)
			}
			tl.InputSchema = json.RawMessage(`{"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$"},"url":{"type":"string","format":"uri"}}}`)
			ts = append(ts, tl)
		}
		snap := catalogtest.Registry(t, ts...).Snapshot()
		d := newDiscoverer(t, &discovery.Options{ReformulateBelow: 0.9}) // reformulate often: that path too
		var qs []discovery.Query
		for range 20 {
			p := tools.Principal{ID: "p", Tenant: tenants[r.IntN(len(tenants))], Scopes: pick(scopes, r.IntN(4))}
			if r.IntN(10) == 0 {
				p.ID = "" // unauthenticated: nothing at all
			}
			q := strings.Join(pick(words, 1+r.IntN(5)), " ") + " ACC-12345 https://x.example/y"
			view := snap.Authorize(p)
			sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 1 + r.IntN(10)})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range sl.Candidates {
				if err := tools.Authorize(p, c.Tool); err != nil {
					t.Fatalf("round %d: Shortlist(%+v, %q) returned %s: %v", round, p, q, c.Tool.ID, err)
				}
			}
			if sl.Authorized != view.Len() {
				t.Fatalf("Authorized = %d, want %d", sl.Authorized, view.Len())
			}
			qs = append(qs, discovery.Query{Query: q, Relevant: []string{ts[r.IntN(len(ts))].ID}, Scopes: pick(scopes, r.IntN(4))})
		}
		rep, err := discovery.Evaluate(context.Background(), d, snap, qs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.DeniedLeaks != 0 {
			t.Fatalf("round %d: DeniedLeaks = %d, want 0", round, rep.DeniedLeaks)
		}
	}
}

func TestShortlistRanksAndCountsTokens(t *testing.T) {
	reg := catalogtest.Registry(t,
		tool("bank/get_balance", "Show the balance of an account", "accounts:read"),
		tool("bank/transfer_funds", "Move money from one account to another", "payments:write"),
		tool("bank/issue_full_refund", "Refund a transaction in full", "billing:admin"),
		tool("mail/send_email", "Send an email message to a recipient"),
	)
	d := newDiscoverer(t, nil)
	ctx := context.Background()
	all := reg.Snapshot().Authorize(tools.Principal{ID: "u", Tenant: "t", Scopes: []string{"accounts:read", "payments:write", "billing:admin"}})
	sl, err := d.Shortlist(ctx, all, discovery.Request{Query: "move money to another account", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(sl); len(got) == 0 || got[0] != "bank/transfer_funds" || len(got) > 2 {
		t.Fatalf("Shortlist(move money) = %v, want bank/transfer_funds first, at most 2", got)
	}
	if sl.ShortlistTokens <= 0 || sl.CatalogTokens <= sl.ShortlistTokens {
		t.Errorf("tokens: shortlist %d, catalog %d; want 0 < shortlist < catalog", sl.ShortlistTokens, sl.CatalogTokens)
	}
	if sl.Confidence < 0 || sl.Confidence > 1 {
		t.Errorf("Confidence = %v, want within [0,1]", sl.Confidence)
	}
	// Without payments:write the transfer tool does not exist for the caller.
	reader := reg.Snapshot().Authorize(tools.Principal{ID: "u", Tenant: "t", Scopes: []string{"accounts:read"}})
	sl, err = d.Shortlist(ctx, reader, discovery.Request{Query: "move money to another account"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids(sl) {
		if id == "bank/transfer_funds" || id == "bank/issue_full_refund" {
			t.Fatalf("Shortlist for a reader returned %s", id)
		}
	}
	if sl.Authorized != 2 {
		t.Errorf("Authorized = %d, want 2", sl.Authorized)
	}
}

// objectSchema is an object schema with the given properties (JSON
// members, without the braces).
func objectSchema(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

func TestIdentifierFavoursToolsThatTakeIt(t *testing.T) {
	a := tool("crm/get_account", "Look up a customer record")
	a.InputSchema = objectSchema(`"account":{"type":"string","pattern":"^ACC-[0-9]{5}$"}`)
	b := tool("crm/get_invoice", "Look up a customer record")
	b.InputSchema = objectSchema(`"invoice":{"type":"string","pattern":"^INV-[0-9]{4}$"}`)
	c := tool("web/open_page", "Look up a customer record")
	c.InputSchema = objectSchema(`"target":{"type":"string","format":"uri"}`)
	snap := catalogtest.Registry(t, a, b, c).Snapshot()
	for _, tc := range []struct{ query, want string }{
		{"look up customer record ACC-12345", "crm/get_account"},
		{"look up customer record INV-1024", "crm/get_invoice"},
		{"look up customer record at https://example.com/c/1", "web/open_page"},
		{"look up customer record at example.com", "web/open_page"},
	} {
		firstFor(t, snap, tc.want, true, tc.query)
	}
}

// firstFor runs each query over snap as one subtest and wants the tool
// want first, and marked as taking an identifier of the request when
// marked is true.
func firstFor(t *testing.T, snap *tools.Snapshot, want string, marked bool, queries ...string) {
	t.Helper()
	d := newDiscoverer(t, nil)
	for _, q := range queries {
		t.Run(q, func(t *testing.T) {
			sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(sl); len(got) == 0 || got[0] != want || marked && !sl.Candidates[0].Identifier {
				t.Errorf("Shortlist(%q) = %v, want %s first (marked as taking an id: %v)", q, got, want, marked)
			}
		})
	}
}

// TestPhoneNumberFavoursToolsThatTakeOne: a telephone number goes to the
// tools whose parameters take one, by name or by an E.164 description.
func TestPhoneNumberFavoursToolsThatTakeOne(t *testing.T) {
	sms := tool("tel/create_message", "Create a new message resource")
	sms.InputSchema = objectSchema(`"To":{"type":"string","description":"The recipient's phone number in E.164 format."}`)
	mail := tool("mail/create_message", "Create a new message resource")
	mail.InputSchema = objectSchema(`"to":{"type":"string","description":"The recipient's address."}`)
	firstFor(t, catalogtest.Registry(t, mail, sms).Snapshot(), sms.ID, true,
		"create a message to +14155550123", "create a message to (415) 555-0100")
}

// TestSQLToolsAreAboutDatabases: a tool that takes a SQL statement answers
// a question about a database's tables though its card names neither.
func TestSQLToolsAreAboutDatabases(t *testing.T) {
	query := tool("pg/query", "Run a read-only SQL query")
	query.InputSchema = objectSchema(`"sql":{"type":"string"}`)
	mail := tool("mail/send_email", "Send an email message to a recipient")
	people := tool("kg/read_graph", "Read the whole knowledge graph of people and projects")
	firstFor(t, catalogtest.Registry(t, mail, people, query).Snapshot(), query.ID, false,
		"what tables are in the database", "jakie tabele są w bazie danych")
}

// TestLightVerbOfAPhrase: the light verb of a phrasal verb ("get" of "get
// rid of") does not pull in the tools named by that verb.
func TestLightVerbOfAPhrase(t *testing.T) {
	get := tool("cache/get_cache", "Get the cache contents")
	del := tool("cache/delete_cache", "Delete the cache")
	firstFor(t, catalogtest.Registry(t, get, del).Snapshot(), del.ID, false, "get rid of the cache", "please get rid of the cache")
}

// TestIdentifierKindStandsIn: a URL cut from a request leaves the word for
// what it was, so that the verb reads with its object: to open a URL is
// to navigate to it.
func TestIdentifierKindStandsIn(t *testing.T) {
	nav := tool("web/navigate", "Navigate the browser to a page")
	nav.InputSchema = objectSchema(`"target":{"type":"string"}`)
	open := tool("kg/open_nodes", "Open the nodes of the knowledge graph by name")
	firstFor(t, catalogtest.Registry(t, open, nav).Snapshot(), nav.ID, false,
		"open https://example.com", "abre https://example.com en el navegador")
}

// TestListQuestions: a question for which things of a kind there are
// ranks the tool that lists them above others that name the kind.
func TestListQuestions(t *testing.T) {
	list := tool("db/list_collections", "List all collections in a database")
	rename := tool("db/rename_collection", "Rename a collection in a database")
	drop := tool("db/drop_collection", "Remove a collection from a database")
	firstFor(t, catalogtest.Registry(t, rename, drop, list).Snapshot(), list.ID, false,
		"which collections are in the shop database", "¿qué colecciones hay en la base shop?", "jakie kolekcje są w bazie shop")
}

// TestWidenWordsNoCardUses: a request word that no card uses reaches, on
// the lexical side alone, the cards that use a lexicon synonym of it; a
// word some card uses is taken at its word.
func TestWidenWordsNoCardUses(t *testing.T) {
	dir := tool("fs/create_directory", "Create a new directory")
	edit := tool("fs/edit_file", "Make line-based edits to a text file")
	folder := tool("fs/move_folder", "Move a folder somewhere else")
	d := newDiscoverer(t, &discovery.Options{NoDense: true})
	shortlist := func(query string, ts ...tools.Tool) *discovery.Shortlist {
		t.Helper()
		snap := catalogtest.Registry(t, ts...).Snapshot()
		sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		return sl
	}
	sl := shortlist("make two folders", dir, edit)
	var widened bool
	for _, c := range sl.Candidates {
		widened = widened || (c.Tool.ID == dir.ID && c.Lexical > 0)
	}
	if !widened {
		t.Errorf("Shortlist(make two folders) = %v, want fs/create_directory with a lexical score (folder → directory)", ids(sl))
	}
	if got := ids(shortlist("folders", dir, folder)); len(got) != 1 || got[0] != folder.ID {
		t.Errorf("Shortlist(folders) over a catalog that uses folder = %v, want only %s", got, folder.ID)
	}
	// A request of that one word finds the card through its synonym alone.
	if got := ids(shortlist("folders", dir)); len(got) != 1 {
		t.Errorf("Shortlist(folders) = %v, want fs/create_directory", got)
	}
}

// TestVerbObjectSense: a request that starts with a verb whose object gives
// it another action's meaning ranks by that action ("open a pull request"
// is to create one), unless it names an existing object by its id or reads
// as an adjective ("open pull requests").
func TestVerbObjectSense(t *testing.T) {
	list := tool("gh/list_pull_requests", "List pull requests by state: open or closed")
	create := tool("gh/create_pull_request", "Create a new pull request")
	get := tool("gh/get_pull_request", "Get a pull request by its number")
	snap := catalogtest.Registry(t, list, create, get).Snapshot()
	// The premise is a lexicon without any pair.
	plain := editedLexicon(t, func(src *lexicon.Source) { src.Senses = nil })
	senses := editedLexicon(t, func(src *lexicon.Source) {
		src.Senses = []lexicon.Entry{{Key: "open pull request", Values: []string{"create"}}}
	})
	first := func(lex *lexicon.Lexicon, query string) string {
		t.Helper()
		d := newDiscoverer(t, &discovery.Options{Lexicon: lex, NoDense: true})
		sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		if len(sl.Candidates) == 0 {
			t.Fatalf("Shortlist(%q) is empty", query)
		}
		return sl.Candidates[0].Tool.ID
	}
	if got := first(plain, "open a pull request"); got != list.ID {
		t.Fatalf("without the pair, Shortlist(open a pull request) starts with %s, want %s (the test's premise)", got, list.ID)
	}
	for _, tc := range []struct{ query, want string }{
		{"open a pull request", create.ID},
		{"please open a new pull request for my branch", create.ID},
		{"open pull request #12", list.ID}, // an id: an existing one, the pair does not apply
		{"list the open pull requests", list.ID},
		{"open pull requests", list.ID},       // an adjective: a plural object, no determiner
		{"open two pull requests", create.ID}, // a verb: a determiner before its object
		{"open pull request", create.ID},
	} {
		t.Run(tc.query, func(t *testing.T) {
			if got := first(senses, tc.query); got != tc.want {
				t.Errorf("Shortlist(%q) starts with %s, want %s", tc.query, got, tc.want)
			}
		})
	}
}

// TestScheduleMeetingSense: to schedule, arrange or organise a meeting
// is to create a calendar event, in English and through the Spanish and
// Polish verbs that translate to "schedule", even where the catalog uses
// "schedule" and "meeting" only in passing in other tools' descriptions.
func TestScheduleMeetingSense(t *testing.T) {
	create := tool("cal/create_event", "Create a new calendar event.")
	now := tool("cal/get_current_time", "Get the current date and time. Call this first before scheduling anything.")
	bytes := tool("files/download_bytes", "Download binary content: drive files, mail attachments, meeting recordings.")
	snap := catalogtest.Registry(t, create, now, bytes).Snapshot()
	d := newDiscoverer(t, &discovery.Options{NoDense: true})
	for _, q := range []string{
		"schedule a meeting with ana tomorrow at 3pm",
		"arrange a call with the vendor on friday",
		"umów spotkanie z klientem na wtorek o 14",
	} {
		t.Run(q, func(t *testing.T) {
			sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(sl); len(got) == 0 || got[0] != create.ID {
				t.Errorf("Shortlist(%q) = %v, want %s first", q, got, create.ID)
			}
		})
	}
}

func TestNotForIsNeverPositiveEvidence(t *testing.T) {
	track := tool("ship/track_package", "Show where a parcel is now")
	delay := tool("ship/report_delay", "Report a late delivery to the carrier")
	delay.Card.NotFor = "checking where a parcel is now; use track_package"
	snap := catalogtest.Registry(t, track, delay).Snapshot()
	d := newDiscoverer(t, &discovery.Options{NoDense: true})
	sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: "where is my parcel now"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(sl); len(got) != 1 || got[0] != "ship/track_package" {
		t.Errorf("Shortlist(where is my parcel now) = %v, want only ship/track_package (report_delay matches only its not_for)", got)
	}
}

func TestIndexFollowsTheRegistry(t *testing.T) {
	reg := catalogtest.Registry(t, tool("a/alpha", "convert currency amounts"), tool("a/beta", "forecast the weather"))
	d := newDiscoverer(t, nil)
	ctx := context.Background()
	x1, err := d.Index(ctx, reg.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(tool("b/gamma", "translate text between languages")); err != nil {
		t.Fatal(err)
	}
	sl, err := d.Shortlist(ctx, reg.Snapshot().Authorize(everyone), discovery.Request{Query: "translate this text"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(sl); got[0] != "b/gamma" {
		t.Fatalf("after Add, Shortlist(translate) = %v, want b/gamma first", got)
	}
	x2, _ := d.Index(ctx, reg.Snapshot())
	if x2 == x1 || x2.Stats().Tools != 3 || x2.Stats().Reused != 2 {
		t.Errorf("rebuilt index stats = %+v, want 3 tools with 2 reused", x2.Stats())
	}
	reg.Remove("b/gamma")
	sl, err = d.Shortlist(ctx, reg.Snapshot().Authorize(everyone), discovery.Request{Query: "translate this text"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids(sl) {
		if id == "b/gamma" {
			t.Fatal("a removed tool was returned")
		}
	}
}

func TestSpanishAndPolishRequests(t *testing.T) {
	snap := realMCP(t).snap
	d := newDiscoverer(t, nil)
	for _, tc := range []struct{ query, want string }{
		{"crea una carpeta nueva", "filesystem/create_directory"},
		{"utwórz nowy katalog", "filesystem/create_directory"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, id := range ids(sl) {
				found = found || id == tc.want
			}
			if !found {
				t.Errorf("Shortlist(%q) = %v, want %s among them", tc.query, ids(sl), tc.want)
			}
		})
	}
}

type fixedReformulator struct{ to string }

func (f fixedReformulator) Reformulate(context.Context, string) (string, error) { return f.to, nil }

func TestLogAndMetrics(t *testing.T) {
	snap := catalogtest.Registry(t, tool("a/send_invoice", "Email an invoice to a customer"), tool("a/refund", "Refund a payment")).Snapshot()
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := newDiscoverer(t, &discovery.Options{
		Log: discovery.NewJSONLog(&buf), Registerer: reg, Clock: func() time.Time { return clock },
		ReformulateBelow: 1, Reformulator: fixedReformulator{"email invoice"},
	})
	p := tools.Principal{ID: "alice", Tenant: "acme"}
	sl, err := d.Shortlist(context.Background(), snap.Authorize(p), discovery.Request{Query: "zzz qqq"})
	if err != nil {
		t.Fatal(err)
	}
	if !sl.Reformulated || sl.ReformulatedQuery != "email invoice" || ids(sl)[0] != "a/send_invoice" {
		t.Fatalf("Shortlist(zzz qqq) = %v reformulated %v %q, want a/send_invoice via the reformulation", ids(sl), sl.Reformulated, sl.ReformulatedQuery)
	}
	var e discovery.Entry
	if err := json.Unmarshal(buf.Bytes(), &e); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	if e.Principal != "alice" || e.Tenant != "acme" || e.Query != "zzz qqq" || !e.Time.Equal(clock) || !e.Reformulated || len(e.Candidates) == 0 || e.Candidates[0].ID != "a/send_invoice" {
		t.Errorf("log entry = %+v", e)
	}
	for name, want := range map[string]float64{"toolgate_discovery_queries_total": 1, "toolgate_discovery_reformulations_total": 1} {
		t.Run(name, func(t *testing.T) {
			c, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := -1.0
			for _, mf := range c {
				if mf.GetName() == name {
					got = mf.GetMetric()[0].GetCounter().GetValue()
				}
			}
			if got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		})
	}
	mfs, _ := reg.Gather()
	var observed uint64
	for _, mf := range mfs {
		if mf.GetName() == "toolgate_discovery_shortlist_seconds" {
			observed = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if observed != 1 {
		t.Errorf("shortlist_seconds samples = %d, want 1", observed)
	}
	if _, err := discovery.New(&discovery.Options{Registerer: reg}); !errors.Is(err, discovery.ErrOptions) {
		t.Errorf("New with metrics registered twice: err = %v, want ErrOptions", err)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	for i, o := range []discovery.Options{{K: -1}, {LexicalWeight: 2}, {ReformulateBelow: 1.5}, {Method: 9}, {Fusion: 9}, {DenseRerank: -1}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, err := discovery.New(&o); !errors.Is(err, discovery.ErrOptions) {
				t.Errorf("New(%+v) err = %v, want ErrOptions", o, err)
			}
		})
	}
}

type brokenEmbedder struct{}

func (brokenEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)+1), nil
}

func TestEmbedderErrors(t *testing.T) {
	snap := catalogtest.Registry(t, tool("a/x", "something")).Snapshot()
	d := newDiscoverer(t, &discovery.Options{Embedder: brokenEmbedder{}})
	_, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: "something"})
	if !errors.Is(err, discovery.ErrEmbedder) {
		t.Errorf("Shortlist with a malformed embedder: err = %v, want ErrEmbedder", err)
	}
	if _, err := d.Shortlist(context.Background(), nil, discovery.Request{Query: "x"}); !errors.Is(err, discovery.ErrNoView) {
		t.Errorf("Shortlist(nil view) err = %v, want ErrNoView", err)
	}
}

func TestReadQueries(t *testing.T) {
	qs, err := discovery.ReadQueries(strings.NewReader("{\"query\":\"a\",\"relevant\":[\"x\"]}\n\n{\"query\":\"b\",\"relevant\":[],\"kind\":\"k\"}\n"), "q.jsonl")
	if err != nil || len(qs) != 2 || qs[1].Kind != "k" {
		t.Fatalf("ReadQueries = %+v, %v", qs, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"{\"query\":\"a\"}\nnot json\n", "q.jsonl:2: invalid JSON"},
		{"{\"relevant\":[\"x\"]}\n", `q.jsonl:1: missing or empty "query"`},
		{"{\"query\":\"a\"} {\"query\":\"b\"}\n", "q.jsonl:1: more than one JSON value"},
		{"{\"query\":\"a\"}\n{\"query\":\"b\",\"scopes\":[\"admin\"],\"scopes\":[]}\n", `q.jsonl:2: duplicate member name "scopes"`},
		{"{\"query\":\"a\",\"relevant\":[\"x\"],\"relevant\":[\"y\"]}\n", `q.jsonl:1: duplicate member name "relevant"`},
		{"{\"query\":\"a\",\"query\":\"b\"}\n", `q.jsonl:1: duplicate member name "query"`},
		{"{\"query\":\"a\",\"relevant\":[\"x\"],\"scope\":[\"admin\"]}\n", `q.jsonl:1: unknown member "scope": did you mean "scopes"? (it would be ignored)`},
		{"{\"query\":\"a\",\"relevant_tools\":[\"x\"],\"languages\":\"en\"}\n{\"query\":\"b\",\"relevants\":[\"x\"]}\n", `q.jsonl:2: unknown member "relevants": did you mean "relevant"? (it would be ignored)`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := discovery.ReadQueries(strings.NewReader(tc.in), "q.jsonl")
			var qe *discovery.QueryError
			if !errors.As(err, &qe) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("ReadQueries(%q) err = %v, want prefix %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestEvaluateSemantics(t *testing.T) {
	snap := catalogtest.Registry(t,
		tool("gh/create_issue", "Create a new issue in a repository"),
		tool("gl/create_issue", "Create a new issue in a project"),
		tool("bank/transfer", "Transfer money between accounts", "payments:write"),
		tool("bank/balance", "Show an account balance"),
	).Snapshot()
	d := newDiscoverer(t, nil)
	qs := []discovery.Query{
		{Query: "create an issue", Relevant: []string{"create_issue"}, Kind: "plain", Lang: "en"},          // bare name: either matches
		{Query: "transfer money", Relevant: []string{"bank/transfer"}, Scopes: []string{}, Kind: "denied"}, // denied
		{Query: "nothing", Relevant: nil}, // unanswerable
		{Query: "show balance and transfer money", Relevant: []string{"bank/balance", "bank/transfer"}, Kind: "multi"},
	}
	rep, err := discovery.Evaluate(context.Background(), d, snap, qs, &discovery.EvalOptions{K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 2 || rep.Denied != 1 || rep.Unanswerable != 1 || rep.DeniedLeaks != 0 {
		t.Fatalf("Evaluate counts = queries %d denied %d unanswerable %d leaks %d, want 2 1 1 0", rep.Queries, rep.Denied, rep.Unanswerable, rep.DeniedLeaks)
	}
	if rep.RecallAt5 != 1 || rep.ByKind["plain"].Queries != 1 || rep.ByLang["en"].RecallAt5 != 1 {
		t.Errorf("Evaluate = R@5 %v by_kind %v by_lang %v, want 1, plain:1, en:1", rep.RecallAt5, rep.ByKind, rep.ByLang)
	}
	if _, ok := rep.ByKind["denied"]; ok {
		t.Error("a denied query was grouped")
	}
}

func ExampleDiscoverer_Shortlist() {
	reg := tools.NewRegistry()
	_ = reg.Add(
		tools.Tool{ID: "bank/get_balance", Card: tools.Card{Name: "get_balance", Summary: "Show the balance of an account", Scopes: []string{"accounts:read"}}},
		tools.Tool{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds", Summary: "Move money between accounts", Scopes: []string{"payments:write"}}},
	)
	d, _ := discovery.New(nil)
	view := reg.Snapshot().Authorize(tools.Principal{ID: "ana", Tenant: "acme", Scopes: []string{"accounts:read"}})
	sl, _ := d.Shortlist(context.Background(), view, discovery.Request{Query: "how much money is in my account?", K: 3})
	for _, c := range sl.Candidates {
		fmt.Println(c.Tool.ID)
	}
	fmt.Println("authorized:", sl.Authorized)
	// Output:
	// bank/get_balance
	// authorized: 1
}

// TestConcurrentShortlistsWhileTheRegistryChanges runs queries from several
// goroutines while tools are added and removed (run it with -race).
func TestConcurrentShortlistsWhileTheRegistryChanges(t *testing.T) {
	reg := catalogtest.Registry(t, tool("a/convert_currency", "Convert an amount between currencies"), tool("a/weather", "Forecast the weather"))
	d := newDiscoverer(t, nil)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				view := reg.Snapshot().Authorize(everyone)
				sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: fmt.Sprintf("convert currency %d %d", g, i)})
				if err != nil {
					errs <- err
					return
				}
				for _, c := range sl.Candidates {
					if _, ok := view.Get(c.Tool.ID); !ok {
						errs <- fmt.Errorf("returned %s, not in the view", c.Tool.ID)
						return
					}
				}
			}
		}()
	}
	for i := range 30 {
		id := fmt.Sprintf("b/tool_%d", i)
		if err := reg.Add(tool(id, "convert currency amounts, variant")); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			reg.Remove(id)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
