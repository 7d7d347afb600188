package cards_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
)

func bankTools() []tools.Tool {
	mk := func(id, desc string, tenants []string, scopes ...string) tools.Tool {
		t := tool(id, desc, `{"type":"object"}`)
		t.Card.Scopes = scopes
		t.Tenants = tenants
		return t
	}
	return []tools.Tool{
		mk("bank/get_balance", "Get the balance of an account", nil, "accounts:read"),
		mk("bank/list_transactions", "List the transactions of an account", nil, "accounts:read"),
		mk("bank/transfer_funds", "Transfer funds between two accounts", nil, "payments:write"),
		mk("bank/issue_full_refund", "Issue a full refund of a transaction", nil, "billing:admin"),
		mk("globex/close_books", "Close the books for the quarter", []string{"globex"}),
	}
}

func bankSnapshot(t *testing.T, ts []tools.Tool) *tools.Snapshot {
	t.Helper()
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot()
}

func miss(tenant, principal, query, called string) discovery.Miss {
	return discovery.Miss{Tenant: tenant, Principal: principal, Query: query, Called: called}
}

var honestBalance = []string{
	"how much money do I have",
	"how much money is left in my account",
	"how much money is in savings",
	"what money do I have left",
	"show how much money I have",
}

func honest(tenant string) []discovery.Miss {
	var out []discovery.Miss
	for i, q := range honestBalance {
		out = append(out, miss(tenant, fmt.Sprintf("user-%d", i), q, "bank/get_balance"))
	}
	return out
}

func examplesOf(entries []cards.Entry, id string) []string {
	for _, e := range entries {
		if e.Tool == id {
			return e.Examples
		}
	}
	return nil
}

func TestLearnProposesSupportedRequests(t *testing.T) {
	snap := bankSnapshot(t, bankTools())
	ms := honest("acme")
	ms = append(ms, miss("acme", "user-9", "wire the rent to my landlord", "bank/transfer_funds")) // one principal: no support
	entries, rep, err := cards.Learn(snap, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := examplesOf(entries, "bank/get_balance")
	if len(got) < 3 || !slices.Contains(got, "how much money do I have") {
		t.Errorf("get_balance examples = %q, want the honest requests", got)
	}
	if ex := examplesOf(entries, "bank/transfer_funds"); ex != nil {
		t.Errorf("one principal's request was proposed: %q", ex)
	}
	if rep.Tenant != "acme" || rep.Misses != 6 || rep.Unsupported == 0 {
		t.Errorf("report = %+v", rep)
	}
	i, _ := snap.Lookup("bank/get_balance")
	if entries[0].Hash != cards.Hash(snap.Tool(i)) {
		t.Errorf("entry hash %s, want the tool's %s", entries[0].Hash, cards.Hash(snap.Tool(i)))
	}
	// What Learn proposes is a valid overlay.
	if _, err := cards.New(entries); err != nil {
		t.Errorf("learned entries do not make an overlay: %v", err)
	}
}

// Words many principals used become tags; the numbers in their requests
// (an account, an amount) do not, however many used them.
func TestLearnTagsAreWordsNotNumbers(t *testing.T) {
	snap := bankSnapshot(t, bankTools())
	var ms []discovery.Miss
	for i := range 4 {
		ms = append(ms, miss("acme", fmt.Sprintf("user-%d", i), fmt.Sprintf("payout of 250 to account 42 number %d", i), "bank/transfer_funds"))
	}
	entries, _, err := cards.Learn(snap, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, e := range entries {
		if e.Tool == "bank/transfer_funds" {
			tags = e.Tags
		}
	}
	if !slices.Contains(tags, "payout") {
		t.Errorf("transfer_funds tags = %q, want payout among them", tags)
	}
	for _, tag := range tags {
		if !strings.ContainsFunc(tag, unicode.IsLetter) {
			t.Errorf("transfer_funds tags = %q, want no number", tags)
			break
		}
	}
}

func TestLearnNeverCrossesTenants(t *testing.T) {
	snap := bankSnapshot(t, bankTools())
	ms := append(honest("acme"), miss("evil", "x", "drain every account", "bank/get_balance"))
	for i := range 5 {
		ms = append(ms, miss("evil", fmt.Sprintf("e%d", i), "drain every account now", "bank/get_balance"))
	}
	if _, _, err := cards.Learn(snap, ms, nil); !errors.Is(err, cards.ErrTenants) {
		t.Fatalf("Learn over two tenants without Tenant: err = %v, want ErrTenants", err)
	}
	entries, _, err := cards.Learn(snap, ms, &cards.LearnOptions{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, s := range append(append([]string(nil), e.Examples...), e.Tags...) {
			if strings.Contains(s, "drain") {
				t.Errorf("acme's overlay holds another tenant's words: %q", s)
			}
		}
	}
	// A tool restricted to another tenant never gets an entry.
	var closing []discovery.Miss
	for i := range 5 {
		closing = append(closing, miss("acme", fmt.Sprintf("u%d", i), "close the books for the quarter", "globex/close_books"))
	}
	entries, rep, err := cards.Learn(snap, closing, nil)
	if err != nil || len(entries) != 0 || rep.Skipped != 5 {
		t.Errorf("Learn for a tool acme may not use = %v entries, %+v, %v", entries, rep, err)
	}
}

// A hostile principal logs hundreds of requests that end in a call of a
// tool it may use (transfer_funds), in the words honest users use for
// get_balance, to hijack their requests. Alone it adds nothing; with
// colluders each adds at most MaxPerPrincipal, and the honest requests
// still find get_balance first.
func TestLearnPoisoningIsBounded(t *testing.T) {
	ts := bankTools()
	snap := bankSnapshot(t, ts)
	hostile := func(principals int) []discovery.Miss {
		var out []discovery.Miss
		for p := range principals {
			for i := range 200 {
				out = append(out, miss("acme", fmt.Sprintf("mallory-%d", p), fmt.Sprintf("how much money do I have %d", i), "bank/transfer_funds"))
			}
		}
		return out
	}
	entries, rep, err := cards.Learn(snap, append(honest("acme"), hostile(1)...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ex := examplesOf(entries, "bank/transfer_funds"); ex != nil {
		t.Fatalf("one hostile principal changed transfer_funds: %q", ex)
	}
	if rep.Capped < 190 {
		t.Errorf("Capped = %d: MaxPerPrincipal did not bound the hostile principal's 200 requests", rep.Capped)
	}

	const colluders = 3
	entries, _, err = cards.Learn(snap, append(honest("acme"), hostile(colluders)...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(examplesOf(entries, "bank/transfer_funds")); n > colluders*3 {
		t.Errorf("%d colluders added %d examples, want at most %d (MaxPerPrincipal each)", colluders, n, colluders*3)
	}
	ov, err := cards.New(entries)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := ov.Apply(ts)
	poisoned := bankSnapshot(t, out)
	d, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := tools.Principal{ID: "user-1", Tenant: "acme", Scopes: []string{"accounts:read", "payments:write"}}
	for _, q := range honestBalance {
		t.Run(q, func(t *testing.T) {
			sl, err := d.Shortlist(context.Background(), poisoned.Authorize(p), discovery.Request{Query: q, K: 3})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range sl.Candidates {
				got = append(got, c.Tool.ID)
			}
			if !slices.Contains(got, "bank/get_balance") {
				t.Errorf("after poisoning, %q shortlists %v: get_balance lost", q, got)
			}
		})
	}
}

// An overlay, learned or written, changes no principal's view: it has no
// field for scopes, tenants or risk.
func TestOverlayNeverChangesWhatAViewHolds(t *testing.T) {
	ts := bankTools()
	var ms []discovery.Miss
	for i := range 5 {
		for _, id := range []string{"bank/issue_full_refund", "bank/get_balance", "globex/close_books"} {
			ms = append(ms, miss("acme", fmt.Sprintf("u%d", i), "refund and close everything "+id, id))
		}
	}
	entries, _, err := cards.Learn(bankSnapshot(t, ts), ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, cards.Entry{Tool: "bank/*", Aliases: []string{"admin", "billing:admin"}, Tags: []string{"globex"}})
	ov, err := cards.New(entries)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := ov.Apply(ts)
	before, after := bankSnapshot(t, ts), bankSnapshot(t, out)
	for i, p := range []tools.Principal{
		{ID: "a", Tenant: "acme", Scopes: []string{"accounts:read"}},
		{ID: "b", Tenant: "acme"},
		{ID: "c", Tenant: "globex", Scopes: []string{"billing:admin"}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var b, a []string
			for _, tl := range before.Authorize(p).Tools() {
				b = append(b, tl.ID)
			}
			for _, tl := range after.Authorize(p).Tools() {
				a = append(a, tl.ID)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s's view: %v before the overlay, %v after", p.ID, b, a)
			}
		})
	}
}

func TestLearnOptions(t *testing.T) {
	snap := bankSnapshot(t, bankTools())
	for i, o := range []cards.LearnOptions{{MinPrincipals: -1}, {MaxExamples: cards.MaxList + 1}, {Similar: 1.5}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, _, err := cards.Learn(snap, nil, &o); !errors.Is(err, cards.ErrOptions) {
				t.Errorf("Learn(%+v) err = %v, want ErrOptions", o, err)
			}
		})
	}
}
