// Package bigcatalog grows real tool catalogs into big synthetic ones, for
// the tests and measurements of discovery at 10,000 and 100,000 tools. The
// result is deterministic: the same base and size give the same tools.
//
// Each generated tool is a copy of a base tool (taken in turn), renamed
// with a word of the base's vocabulary and its number, its description and
// summary extended with four such words, so that postings and vectors have
// realistic lengths and overlaps; a third of the tools need a scope
// ("scope0" … "scope7"). The copies of one round over the base share a
// namespace per base namespace (`s<round>-<base namespace>`), as the
// servers of a big deployment would.
package bigcatalog

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/toolgate/toolgate/tools"
)

// Definitions returns n definitions grown from base (which must not be
// empty) with their namespaces: defs[i] belongs to namespace ns[i].
func Definitions(base []*tools.Tool, n int) (defs []tools.Definition, ns []string) {
	var vocab []string
	for _, t := range base {
		for _, w := range strings.Fields(t.Description) {
			if w = strings.Trim(strings.ToLower(w), ".,:;()'\"`[]{}"); len(w) > 3 && isWord(w) {
				vocab = append(vocab, w)
			}
		}
	}
	if len(vocab) == 0 {
		vocab = []string{"extra"}
	}
	r := rand.New(rand.NewPCG(7, 11))
	defs = make([]tools.Definition, 0, n)
	ns = make([]string, 0, n)
	for i := 0; len(defs) < n; i++ {
		src := base[i%len(base)]
		replica := i / len(base)
		extra := make([]string, 4)
		for j := range extra {
			extra[j] = vocab[r.IntN(len(vocab))]
		}
		d := tools.Definition{
			Name:        fmt.Sprintf("%s_%s_%d", src.Name(), extra[0], i),
			Description: src.Description + " " + strings.Join(extra, " "),
			Summary:     src.Card.Summary + " " + extra[1],
			InputSchema: src.InputSchema,
			Aliases:     src.Card.Aliases,
			Tags:        src.Card.Tags,
			NotFor:      src.Card.NotFor,
			Group:       src.Card.Group,
		}
		if r.IntN(3) == 0 {
			d.Scopes = []string{fmt.Sprintf("scope%d", r.IntN(8))}
		}
		defs = append(defs, d)
		ns = append(ns, fmt.Sprintf("s%d-%s", replica, src.Namespace()))
	}
	return defs, ns
}

func isWord(w string) bool {
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Tools returns the n tools of Definitions, each defined in its namespace.
func Tools(base []*tools.Tool, n int) ([]tools.Tool, error) {
	defs, ns := Definitions(base, n)
	out := make([]tools.Tool, 0, n)
	for i, d := range defs {
		t, err := tools.Define(ns[i], d)
		if err != nil {
			return nil, fmt.Errorf("bigcatalog: tool %d (%s/%s): %w", i, ns[i], d.Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// DistinctSchemas gives each of defs an input schema of its own: one more
// string property, request_<i>, for the i-th. The copies of Definitions
// share their base tool's schema, as the replicas of one server would; a
// catalog gathered from many different servers has mostly distinct
// schemas, and costs more to load and index.
func DistinctSchemas(defs []tools.Definition) error {
	for i := range defs {
		d := &defs[i]
		top := map[string]json.RawMessage{}
		if len(d.InputSchema) > 0 {
			if err := json.Unmarshal(d.InputSchema, &top); err != nil {
				return fmt.Errorf("bigcatalog: tool %d (%s): %w", i, d.Name, err)
			}
		}
		props := map[string]json.RawMessage{}
		if p, ok := top["properties"]; ok {
			if err := json.Unmarshal(p, &props); err != nil {
				return fmt.Errorf("bigcatalog: tool %d (%s): properties: %w", i, d.Name, err)
			}
		}
		props[fmt.Sprintf("request_%d", i)] = json.RawMessage(fmt.Sprintf(`{"type":"string","description":"Identifier of request %d"}`, i))
		var err error
		if top["properties"], err = json.Marshal(props); err != nil {
			return err
		}
		if _, ok := top["type"]; !ok {
			top["type"] = json.RawMessage(`"object"`)
		}
		if d.InputSchema, err = json.Marshal(top); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSONL writes the n definitions of Definitions as a JSON Lines
// catalog file of one namespace (the file's; the replica number is in
// every name, so names stay unique), their schemas made distinct
// ([DistinctSchemas]) when distinct is set.
func WriteJSONL(w io.Writer, base []*tools.Tool, n int, distinct bool) error {
	defs, _ := Definitions(base, n)
	if distinct {
		if err := DistinctSchemas(defs); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range defs {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return nil
}
