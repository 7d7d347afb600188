package runtime

import (
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// BenchmarkStepNames is what one step spends on model-facing names over
// the real catalogs (105 tools): naming a shortlist of five and mapping
// the called name back. "step" is a step of a session that has shown
// them already; "first-step" one of a new session; "after-change" a step
// that sees another catalog snapshot than the step before (a
// list_changed between every two steps, the worst case).
func BenchmarkStepNames(b *testing.B) {
	ts, err := catalog.LoadAll(testenv.Catalogs(b)...)
	if err != nil {
		b.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		b.Fatal(err)
	}
	snaps := []*tools.Snapshot{reg.Snapshot()}
	if err := reg.Add(tools.Tool{ID: "extra/delete_repository", Card: tools.Card{Name: "delete_repository", Summary: "Delete a repository"}}); err != nil {
		b.Fatal(err)
	}
	snaps = append(snaps, reg.Snapshot())
	all := snaps[0].Tools()
	short := []*tools.Tool{all[3], all[17], all[40], all[66], all[90]}
	p := tools.Principal{ID: "bench", Tenant: "acme"}
	newSession := func() *Session { return &Session{principal: p, bound: tools.NewSessionNames(p.Tenant, FindToolsName)} }
	step := func(nm names) {
		for _, t := range short {
			if _, ok := nm.id(nm.name(t)); !ok {
				b.Fatalf("%s does not map back", t.ID)
			}
		}
	}
	b.Run("step", func(b *testing.B) {
		s := newSession()
		b.ReportAllocs()
		for b.Loop() {
			step(s.names(snaps[0]))
		}
	})
	b.Run("first-step", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			step(newSession().names(snaps[0]))
		}
	})
	b.Run("after-change", func(b *testing.B) {
		s := newSession()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			step(s.names(snaps[i%2]))
		}
	})
}
