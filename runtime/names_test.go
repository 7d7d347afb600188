package runtime_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools"
)

// TestModelNamesDoNotDependOnTheCaller: the names a model is shown come
// from the whole catalog, not from what the caller may use. Two tools
// sharing a bare name are shown server-qualified to every caller, even to
// one who may use only one of them, and the bare name is refused for
// everyone: find_tools' select: does not load "the only one this caller
// may use", it lists the caller's candidates as ambiguous (docs/design.md
// invariant 8).
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
			// Nothing loaded; the answer names the caller's candidates, by
			// the names shown.
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			amb, _ := json.Marshal(map[string][]string{"delete_repository": tc.shown})
			if !strings.Contains(last.Content, `"ambiguous":`+string(amb)) || strings.Contains(last.Content, `"name":"`) {
				t.Errorf("select:delete_repository answered %s; want it ambiguous among %v, nothing loaded", last.Content, tc.shown)
			}
		})
	}
}

// TestModelNamesHoldForTheSession: a name the model has been shown names
// the same tool for the whole session. A catalog change between two turns
// of one conversation never re-points it: a second server's tool with the
// same name is shown server-qualified beside it, and once the tool has
// left the catalog its name reaches nothing (the call is refused as
// unknown, select: finds nothing), even where another tool is now the
// only one with that bare name (docs/design.md invariant 8). On main the
// names were those of each catalog snapshot: "delete_repository" went
// qualified in the first row and was GitLab's tool in the others.
func TestModelNamesHoldForTheSession(t *testing.T) {
	secondServer := func(reg *tools.Registry, log *ranLog) error {
		return reg.Add(log.deleter("gitlab/delete_repository"))
	}
	serverSwap := func(reg *tools.Registry, log *ranLog) error {
		if err := reg.ReplaceNamespace("github", nil); err != nil {
			return err
		}
		return reg.Add(log.deleter("gitlab/delete_repository"))
	}
	tests := []struct {
		name   string
		change func(*tools.Registry, *ranLog) error
		second []scripted.Reply // the second turn's replies
		shown  []string         // the delete tools the second turn shows
		ran    []string
		result string // in the second turn's last tool result, when set
	}{
		{"a second server adds the name", secondServer,
			[]scripted.Reply{scripted.Call("delete_repository", `{}`), scripted.Answer("done")},
			[]string{"delete_repository", "gitlab__delete_repository"}, []string{"github/delete_repository"}, ""},
		{"the tool left, another has its name", serverSwap,
			[]scripted.Reply{scripted.Call("delete_repository", `{}`), scripted.Answer("done")},
			[]string{"gitlab__delete_repository"}, nil, ""},
		{"select: the name of a tool that left", serverSwap,
			[]scripted.Reply{scripted.FindTools("select:delete_repository"), scripted.Answer("done")},
			[]string{"gitlab__delete_repository"}, nil, `"missing":["delete_repository"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log ranLog
			replies := append([]scripted.Reply{scripted.Answer("which repository?")}, tc.second...)
			e := newEnv(t, replies, false, nil)
			if err := e.reg.Add(log.deleter("github/delete_repository")); err != nil {
				t.Fatal(err)
			}
			p := tools.Principal{ID: "dev", Tenant: "acme"}
			s := e.agent.NewSession(p, "s-"+tc.name, nil)
			if _, err := s.Run(t.Context(), "delete the old repository"); err != nil {
				t.Fatal(err)
			}
			if first := deleteTools(e.model.Requests()[0]); !slices.Equal(first, []string{"delete_repository"}) {
				t.Fatalf("first turn shows %v, want [delete_repository]", first)
			}
			if err := tc.change(e.reg, &log); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(t.Context(), "the one called delete_repository"); err != nil {
				t.Fatal(err)
			}
			reqs := e.model.Requests()
			if shown := deleteTools(reqs[1]); !slices.Equal(shown, tc.shown) {
				t.Errorf("second turn shows %v, want %v", shown, tc.shown)
			}
			if got := log.ran(); !slices.Equal(got, tc.ran) {
				t.Errorf("tools run = %v, want %v", got, tc.ran)
			}
			if tc.result != "" {
				msgs := reqs[len(reqs)-1].Messages
				if last := msgs[len(msgs)-1].Content; !strings.Contains(last, tc.result) || strings.Contains(last, `"name":"`) {
					t.Errorf("last tool result %s; want %s, nothing found", last, tc.result)
				}
			}
		})
	}
}

// ranLog records the tools its deleters ran, in order.
type ranLog struct {
	mu  sync.Mutex
	ids []string
}

// deleter is a delete_repository tool with ID id that records its runs.
func (r *ranLog) deleter(id string) tools.Tool {
	_, name, _ := strings.Cut(id, "/")
	return tools.Tool{ID: id, Card: tools.Card{Name: name, Summary: "Delete a repository for good"},
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.ids = append(r.ids, id)
			return json.RawMessage(`{}`), nil
		}}
}

func (r *ranLog) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids)
}

// deleteTools are the delete_repository tools req shows, sorted.
func deleteTools(req *llm.Request) []string {
	var out []string
	for _, name := range shownTools(req) {
		if strings.Contains(name, "delete_repository") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestRestoredSessionKeepsItsNames: a session re-created from its history
// with its names (Session.Names, SessionOptions.Names) keeps them: after
// GitHub's server has left, "delete_repository", which the history shows
// naming GitHub's tool, does not reach GitLab's, now the only one.
func TestRestoredSessionKeepsItsNames(t *testing.T) {
	var log ranLog
	e := newEnv(t, []scripted.Reply{scripted.Answer("which repository?"),
		scripted.Call("delete_repository", `{}`), scripted.Answer("done")}, false, nil)
	if err := e.reg.Add(log.deleter("github/delete_repository")); err != nil {
		t.Fatal(err)
	}
	p := tools.Principal{ID: "dev", Tenant: "acme"}
	s := e.agent.NewSession(p, "s-restored", nil)
	if _, err := s.Run(t.Context(), "delete the old repository"); err != nil {
		t.Fatal(err)
	}
	names := s.Names()
	if names["delete_repository"] != "github/delete_repository" {
		t.Fatalf("Names() = %v, want delete_repository bound to github/delete_repository", names)
	}
	if err := e.reg.ReplaceNamespace("github", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.Add(log.deleter("gitlab/delete_repository")); err != nil {
		t.Fatal(err)
	}
	restored := e.agent.NewSession(p, "s-restored", &runtime.SessionOptions{Step: s.Step(), History: s.History(), Names: names})
	if _, err := restored.Run(t.Context(), "the one called delete_repository"); err != nil {
		t.Fatal(err)
	}
	if shown := deleteTools(e.model.Requests()[1]); !slices.Equal(shown, []string{"gitlab__delete_repository"}) {
		t.Errorf("the restored session shows %v, want [gitlab__delete_repository]", shown)
	}
	if ran := log.ran(); len(ran) != 0 {
		t.Errorf("tools run = %v, want none", ran)
	}
}
