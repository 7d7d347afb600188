package runtime_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
)

func TestSuggestCard(t *testing.T) {
	tl := &tools.Tool{ID: "github/create_pull_request", Description: "Create a new pull request in a GitHub repository",
		Card: tools.Card{Name: "create_pull_request"}}
	good := `{"aliases":["open a PR"],"examples":["open a pull request for my branch","send my changes for review","abre una pull request"],"not_for":"reviewing one: use create_pull_request_review"}`
	for i, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			model := scripted.New([]scripted.Reply{scripted.Call("write_card", good)}, nil)
			e, err := runtime.SuggestCard(t.Context(), model, tl, "github/create_pull_request_review", &runtime.SuggestOptions{Mode: mode, Langs: []string{"en", "es"}})
			if err != nil {
				t.Fatalf("%v: %v", mode, err)
			}
			if e.Hash != cards.Hash(tl) || len(e.Examples) != 3 || e.Aliases[0] != "open a PR" {
				t.Errorf("%v: entry = %+v", mode, e)
			}
			req := model.Requests()[0]
			var text string
			for _, m := range req.Messages {
				text += m.Content + "\n"
			}
			if !strings.Contains(text, "Sibling: create_pull_request_review") || !strings.Contains(text, "en, es") {
				t.Errorf("%v: the request lacks the sibling or the languages: %s", mode, text)
			}
			if mode == llm.ModeEnvelope && !strings.Contains(string(req.Constraint.EnvelopeSchema), `"minItems":3`) {
				t.Errorf("envelope schema does not constrain the examples: %s", req.Constraint.EnvelopeSchema)
			}
		})
	}
	for name, args := range map[string]string{
		"two examples":   `{"aliases":["a"],"examples":["x","y"],"not_for":"use create_pull_request_review"}`,
		"no sibling":     `{"aliases":["a"],"examples":["x","y","z"],"not_for":"never"}`,
		"unknown field":  `{"aliases":["a"],"examples":["x","y","z"],"not_for":"use create_pull_request_review","scopes":["admin"]}`,
		"control text":   `{"aliases":["a\u0007"],"examples":["x","y","z"],"not_for":"use create_pull_request_review"}`,
		"six aliases":    `{"aliases":["a","b","c","d","e","f"],"examples":["x","y","z"],"not_for":"use create_pull_request_review"}`,
		"empty examples": `{"aliases":["a"],"examples":["x","y",""],"not_for":"use create_pull_request_review"}`,
		"long alias":     `{"aliases":["` + strings.Repeat("a", 81) + `"],"examples":["x","y","z"],"not_for":"use create_pull_request_review"}`,
		"long example":   `{"aliases":["a"],"examples":["x","y","` + strings.Repeat("é", 201) + `"],"not_for":"use create_pull_request_review"}`,
		"long not_for":   `{"aliases":["a"],"examples":["x","y","z"],"not_for":"use create_pull_request_review` + strings.Repeat(" then", 40) + `"}`,
		"sibling inside": `{"aliases":["a"],"examples":["x","y","z"],"not_for":"use create_pull_request_reviews"}`,
		"only others":    `{"aliases":["Create pull-request review"],"examples":["x","y","z"],"not_for":"use create_pull_request_review"}`,
	} {
		t.Run(name, func(t *testing.T) {
			model := scripted.New([]scripted.Reply{scripted.Call("write_card", args)}, nil)
			if _, err := runtime.SuggestCard(t.Context(), model, tl, "github/create_pull_request_review", nil); !errors.Is(err, runtime.ErrSuggestion) {
				t.Errorf("%s: err = %v, want ErrSuggestion", name, err)
			}
		})
	}
	model := scripted.New([]scripted.Reply{scripted.Answer("here you go")}, nil)
	if _, err := runtime.SuggestCard(t.Context(), model, tl, "", nil); err == nil {
		t.Error("an answer instead of the call was accepted")
	}
	model = scripted.New([]scripted.Reply{scripted.Call("write_card", good)}, nil)
	if _, err := runtime.SuggestCard(t.Context(), model, tl, "", &runtime.SuggestOptions{Timeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "SuggestOptions.Timeout") {
		t.Errorf("SuggestCard with a negative Timeout: err = %v, want one naming SuggestOptions.Timeout", err)
	}
}

// Aliases that read as another tool's name (the sibling's, or one of
// SuggestOptions.Names) are dropped, the tool's own name is not; the
// schema's bounds hold in characters, not bytes; the description is cut at
// a character boundary.
func TestSuggestCardAliasesAndBounds(t *testing.T) {
	tl := &tools.Tool{ID: "github/create_pull_request", Description: "a" + strings.Repeat("é", 400),
		Card: tools.Card{Name: "create_pull_request"}}
	args := `{"aliases":["open a PR","create pull request","Merge Pull-Request","create_pull_request_review","` + strings.Repeat("ł", 80) + `"],` +
		`"examples":["open a pull request for my branch","send my changes for review","abre una pull request"],"not_for":"reviewing one: use create_pull_request_review."}`
	model := scripted.New([]scripted.Reply{scripted.Call("write_card", args)}, nil)
	e, err := runtime.SuggestCard(t.Context(), model, tl, "github/create_pull_request_review",
		&runtime.SuggestOptions{Names: []string{"github/merge_pull_request", "github/create_pull_request", "gitlab/create_merge_request"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"open a PR", "create pull request", strings.Repeat("ł", 80)}
	if strings.Join(e.Aliases, "|") != strings.Join(want, "|") {
		t.Errorf("SuggestCard aliases = %q, want %q", e.Aliases, want)
	}
	for _, m := range model.Requests()[0].Messages {
		if !utf8.ValidString(m.Content) {
			t.Errorf("the request holds invalid UTF-8: %q", m.Content)
		}
	}
}

// A sibling with t's own bare name (another server's tool) is named by
// its ID, in the request and in the not_for it must hold; so is one whose
// bare name another tool of Names shares.
func TestSuggestCardNamesASiblingByIDWhenItsNameIsShared(t *testing.T) {
	tl := &tools.Tool{ID: "github/create_issue", Description: "Create a new issue in a GitHub repository",
		Card: tools.Card{Name: "create_issue"}}
	for _, tc := range []struct {
		sibling string
		names   []string
		label   string
	}{
		{"gitlab/create_issue", nil, "gitlab/create_issue"},
		{"github/update_issue", []string{"github/update_issue", "jira/update_issue"}, "github/update_issue"},
		{"github/update_issue", []string{"github/update_issue", "github/create_issue"}, "update_issue"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			reply := func(notFor string) *scripted.Backend {
				return scripted.New([]scripted.Reply{scripted.Call("write_card", `{"aliases":["file a bug"],"examples":["x","y","z"],"not_for":"`+notFor+`"}`)}, nil)
			}
			model := reply("another project: use " + tc.label)
			if _, err := runtime.SuggestCard(t.Context(), model, tl, tc.sibling, &runtime.SuggestOptions{Names: tc.names}); err != nil {
				t.Errorf("sibling %s: %v", tc.sibling, err)
				return
			}
			if text := model.Requests()[0].Messages[1].Content; !strings.Contains(text, "Sibling: "+tc.label+"\n") {
				t.Errorf("sibling %s: the request says %q, want Sibling: %s", tc.sibling, text, tc.label)
			}
			if tc.label != siblingBare(tc.sibling) {
				if _, err := runtime.SuggestCard(t.Context(), reply("use "+siblingBare(tc.sibling)), tl, tc.sibling, &runtime.SuggestOptions{Names: tc.names}); !errors.Is(err, runtime.ErrSuggestion) {
					t.Errorf("sibling %s: a not_for naming only %s: err = %v, want ErrSuggestion", tc.sibling, siblingBare(tc.sibling), err)
				}
			}
		})
	}
}

func siblingBare(id string) string {
	_, name, _ := strings.Cut(id, "/")
	return name
}

// A card's own not_for is kept: the entry, which would replace it, has
// none.
func TestSuggestCardKeepsTheCardsNotFor(t *testing.T) {
	tl := &tools.Tool{ID: "github/create_issue", Description: "Create a new issue in a GitHub repository",
		Card: tools.Card{Name: "create_issue", NotFor: "Commenting on an issue; use add_issue_comment."}}
	model := scripted.New([]scripted.Reply{scripted.Call("write_card", `{"aliases":["file a bug"],"examples":["x","y","z"],"not_for":"anything else"}`)}, nil)
	e, err := runtime.SuggestCard(t.Context(), model, tl, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.NotFor != "" || len(e.Aliases) != 1 {
		t.Errorf("SuggestCard for a card with a not_for = %+v, want aliases and no not_for", e)
	}
	ts, _ := (mustOverlay(t, e)).Apply([]tools.Tool{*tl})
	if ts[0].Card.NotFor != tl.Card.NotFor {
		t.Errorf("applied, the entry changed not_for to %q", ts[0].Card.NotFor)
	}
}

func mustOverlay(t *testing.T, entries ...cards.Entry) *cards.Overlay {
	t.Helper()
	ov, err := cards.New(entries)
	if err != nil {
		t.Fatal(err)
	}
	return ov
}
