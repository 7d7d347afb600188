// Package httpdiscover answers the HTTP gateway's POST /v1/discover from a
// discovery.Discoverer: the shortlist of the tools the bearer may use, in
// the shape of `toolgate discover --format json` plus what a client needs
// to call each candidate (its description and input schema). The view is
// authorized before any search, so nothing else can be returned. Both
// `toolgate serve` and `examples/transfer serve` use it.
package httpdiscover

import (
	"context"
	"encoding/json"
	"math"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Answer is the body of a successful POST /v1/discover.
type Answer struct {
	Query           string      `json:"query"`
	Candidates      []Candidate `json:"candidates"`
	Authorized      int         `json:"authorized"`
	ShortlistTokens int         `json:"shortlist_tokens"`
	CatalogTokens   int         `json:"catalog_tokens"`
	Reformulated    bool        `json:"reformulated"`
}

// Candidate is one shortlisted tool.
type Candidate struct {
	Name        string          `json:"name"` // the tool's ID, as POST /v1/tools/call takes it
	Score       float64         `json:"score"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Hook returns the gateway.DiscoverFunc that shortlists, on the registry's
// current snapshot, the tools the principal may use.
func Hook(d *discovery.Discoverer, reg *tools.Registry) gateway.DiscoverFunc {
	return func(ctx context.Context, p tools.Principal, query string, k int) (any, error) {
		sl, err := d.Shortlist(ctx, reg.Snapshot().Authorize(p), discovery.Request{Query: query, K: k})
		if err != nil {
			return nil, err
		}
		out := Answer{Query: sl.Query, Candidates: []Candidate{}, Authorized: sl.Authorized,
			ShortlistTokens: sl.ShortlistTokens, CatalogTokens: sl.CatalogTokens, Reformulated: sl.Reformulated}
		for _, c := range sl.Candidates {
			desc := c.Tool.Description
			if desc == "" {
				desc = c.Tool.Card.Summary
			}
			out.Candidates = append(out.Candidates, Candidate{Name: c.Tool.ID, Score: math.Round(c.Score*1e4) / 1e4,
				Description: desc, InputSchema: c.Tool.InputSchema})
		}
		return out, nil
	}
}
