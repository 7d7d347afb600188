package discovery_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestNamedTools: what counts as naming another tool. The victims are
// bank/transfer_funds, postgres/query (a single-word name) and
// github/create_issue with its gitlab namesake; the writer is a tool of
// namespace "notes" (or of the victims' own namespaces).
func TestNamedTools(t *testing.T) {
	victims := []tools.Tool{
		{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds"}},
		{ID: "postgres/query", Card: tools.Card{Name: "query"}},
		{ID: "github/create_issue", Card: tools.Card{Name: "create_issue"}},
		{ID: "gitlab/create_issue", Card: tools.Card{Name: "create_issue"}},
	}
	for _, tc := range []struct {
		name   string
		writer tools.Tool
		want   []string
	}{
		{"snake case in the description", tools.Tool{ID: "notes/helper", Description: "Better than transfer_funds."}, []string{"bank/transfer_funds"}},
		{"kebab case alias", tools.Tool{ID: "notes/helper", Card: tools.Card{Aliases: []string{"transfer-funds"}}}, []string{"bank/transfer_funds"}},
		{"camel case summary", tools.Tool{ID: "notes/helper", Card: tools.Card{Summary: "Like transferFunds."}}, []string{"bank/transfer_funds"}},
		{"Pascal case tag", tools.Tool{ID: "notes/helper", Card: tools.Card{Tags: []string{"TransferFunds"}}}, []string{"bank/transfer_funds"}},
		{"dotted", tools.Tool{ID: "notes/helper", Description: "see transfer.funds"}, []string{"bank/transfer_funds"}},
		{"ID form", tools.Tool{ID: "notes/helper", Description: "Use me, not bank/transfer_funds."}, []string{"bank/transfer_funds"}},
		{"single-word name by ID", tools.Tool{ID: "notes/helper", Description: "Faster than postgres/query."}, []string{"postgres/query"}},
		{"parameter name", tools.Tool{ID: "notes/helper", InputSchema: []byte(`{"type":"object","properties":{"transfer_funds":{"type":"string"}}}`)}, []string{"bank/transfer_funds"}},
		{"a name two servers have", tools.Tool{ID: "notes/helper", Description: "calls create_issue"}, []string{"github/create_issue", "gitlab/create_issue"}},
		{"plain words", tools.Tool{ID: "notes/helper", Description: "Transfer funds, create an issue, run a query."}, nil},
		{"single-word name bare", tools.Tool{ID: "notes/helper", Description: "Run a `query` on notes."}, nil},
		{"not_for may name siblings", tools.Tool{ID: "notes/helper", Card: tools.Card{NotFor: "Payments; use bank/transfer_funds."}}, nil},
		{"its own name", tools.Tool{ID: "notes/transfer_funds", Description: "transfer_funds moves notes."}, nil},
		{"its own namespace's tool", tools.Tool{ID: "gitlab/helper", Description: "Prefer create_issue or gitlab/create_issue."}, nil},
		{"no such tool", tools.Tool{ID: "notes/helper", Description: "Like send_money or bank/get_balance."}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.writer
			w.Card.Name = w.Name()
			snap := catalogtest.Registry(t, append(slices.Clone(victims), w)...).Snapshot()
			i, _ := snap.Lookup(w.ID)
			if got := discovery.NamedTools(snap)[i]; !slices.Equal(got, tc.want) {
				t.Errorf("NamedTools()[%s] = %v, want %v", w.ID, got, tc.want)
			}
		})
	}
}
