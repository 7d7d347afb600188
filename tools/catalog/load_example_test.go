package catalog_test

import (
	"fmt"
	"log"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// LoadAll reads several catalog files into one list: "NS=FILE" names the
// namespace, a bare FILE takes its stem. Like Parse, it returns every good
// tool beside an error that joins one *catalog.Error{File, Line, Reason}
// per problem.
func ExampleLoadAll() {
	ts, err := catalog.LoadAll("github=testdata/github.json", "testdata/slack.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		log.Fatal(err)
	}
	for _, t := range ts {
		fmt.Println(t.ID, t.Card.Scopes, t.Card.ReadOnly)
	}
	// Output:
	// github/create_issue [github:write] false
	// github/search_repositories [github:read] true
	// slack/slack_post_message [slack:write] false
	// slack/slack_list_channels [slack:read] true
}
