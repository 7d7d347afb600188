package cards_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
)

// An overlay file adds the team's words to a catalog it does not own:
// aliases and examples for one tool (bound to the tool's hash, so an
// upstream change makes the entry stale instead of wrong) and names for a
// whole server.
func ExampleOverlay_Apply() {
	issue, err := tools.Define("github", tools.Definition{Name: "create_issue",
		Description: "Create a new issue in a GitHub repository.", Scopes: []string{"github:write"}})
	if err != nil {
		log.Fatal(err)
	}
	catalogTools := []tools.Tool{issue}
	dir, err := os.MkdirTemp("", "cards-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	overlay := `{"tool":"github/*","aliases":["gh"]}` + "\n" +
		fmt.Sprintf(`{"tool":"github/create_issue","hash":%q,"aliases":["open a ticket"],"examples":["file a bug about the login page"]}`,
			cards.Hash(&catalogTools[0])) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "team.cards.jsonl"), []byte(overlay), 0o644); err != nil {
		log.Fatal(err)
	}
	reg := tools.NewRegistry()

	ov, err := cards.Load(filepath.Join(dir, "team.cards.jsonl")) // *cards.Error: FILE:LINE: reason
	if err != nil {
		log.Fatal(err)
	}
	ts, rep := ov.Apply(catalogTools) // rep.Changed, rep.Stale, rep.Unknown (report them)
	if err := reg.Add(ts...); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Changed, len(rep.Stale), len(rep.Unknown))
	fmt.Println(ts[0].Card.Aliases, ts[0].Card.Examples, ts[0].Card.Tags)
	// Output:
	// [github/create_issue] 0 0
	// [open a ticket] [file a bug about the login page] [gh]
}
