package runtime_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/tools"
)

// TestModelNamesDoNotDependOnTheCaller: the names a model is shown come
// from the whole catalog, not from what the caller may use. Two tools
// sharing a bare name are shown server-qualified to every caller, even to
// one who may use only one of them, and the bare name is refused for
// everyone: find_tools' select: does not load "the only one this caller
// may use" (docs/design.md invariant 8).
func TestModelNamesDoNotDependOnTheCaller(t *testing.T) {
	deleter := func(id, scope string) tools.Tool {
		_, name, _ := strings.Cut(id, "/")
		return tools.Tool{ID: id, Card: tools.Card{Name: name, Summary: "Delete a repository for good", Scopes: []string{scope}},
			Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }}
	}
	tests := []struct {
		name   string
		scopes []string
		shown  []string // the delete tools the first request shows
	}{
		{"may use one", []string{"github:admin"}, []string{"github__delete_repository"}},
		{"may use both", []string{"github:admin", "gitlab:admin"}, []string{"github__delete_repository", "gitlab__delete_repository"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, []scripted.Reply{scripted.FindTools("select:delete_repository"), scripted.Answer("done")}, false, nil)
			if err := e.reg.Add(deleter("github/delete_repository", "github:admin"), deleter("gitlab/delete_repository", "gitlab:admin")); err != nil {
				t.Fatal(err)
			}
			p := tools.Principal{ID: "dev", Tenant: "acme", Scopes: tc.scopes}
			if _, err := e.agent.NewSession(p, "s-"+tc.name, nil).Run(t.Context(), "delete the old repository"); err != nil {
				t.Fatal(err)
			}
			reqs := e.model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			var shown []string
			for _, name := range shownTools(reqs[0]) {
				if strings.Contains(name, "delete_repository") {
					shown = append(shown, name)
				}
			}
			slices.Sort(shown)
			if !slices.Equal(shown, tc.shown) {
				t.Errorf("first request shows %v, want %v", shown, tc.shown)
			}
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			if !strings.Contains(last.Content, `"missing":["delete_repository"]`) || strings.Contains(last.Content, `"name":"`) {
				t.Errorf("select:delete_repository answered %s; want it missing, nothing loaded", last.Content)
			}
		})
	}
}
