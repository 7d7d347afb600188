package discovery_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// companionCatalog is a small synthetic catalog: calendar tools that need
// an authentication token or a meeting's id, the tools that produce them
// (one behind the scope "auth"), a token tool of another namespace, and
// unrelated tools to fill a shortlist.
func companionCatalog(t *testing.T) *tools.Snapshot {
	t.Helper()
	withSchema := func(tl tools.Tool, schema string) tools.Tool {
		tl.InputSchema = json.RawMessage(schema)
		return tl
	}
	return catalogtest.Registry(t,
		withSchema(tool("cal/add_event", "Add an event to the user's calendar with a title and a time."),
			`{"type":"object","properties":{"title":{"type":"string"},"time":{"type":"string"},"token":{"type":"string","description":"The user's authentication token."}},"required":["title","time","token"]}`),
		withSchema(tool("cal/set_reminder", "Set a reminder some minutes before something happens."),
			`{"type":"object","properties":{"minutes":{"type":"integer"}},"required":["minutes"]}`),
		tool("cal/cancel_booking", "Cancel a room booking and notify the team."),
		tool("cal/cancel_subscription", "Cancel a calendar subscription of the team."),
		withSchema(tool("cal/get_user_token", "Log a user in with their username and password and return their authentication token.", "auth"),
			`{"type":"object","properties":{"username":{"type":"string"},"password":{"type":"string"}},"required":["username","password"]}`),
		withSchema(tool("cal/cancel_meeting", "Cancel a meeting and notify its attendees."),
			`{"type":"object","properties":{"meeting_id":{"type":"string","description":"The id of the meeting."}},"required":["meeting_id"]}`),
		withSchema(tool("cal/list_meetings", "List the user's upcoming meetings with their ids."),
			`{"type":"object","properties":{"after":{"type":"string"}}}`),
		withSchema(tool("other/get_api_token", "Return an authentication token for the user of another service."),
			`{"type":"object","properties":{"user":{"type":"string"}},"required":["user"]}`),
		tool("wx/forecast", "Weather forecast for a city."),
		tool("mail/send_email", "Send an email to a recipient."),
		tool("files/read_file", "Read a file from disk."),
		tool("notes/create_note", "Create a note with a title."),
	).Snapshot()
}

func TestCompanions(t *testing.T) {
	snap := companionCatalog(t)
	all := snap.Authorize(tools.Principal{ID: "u1", Tenant: "t1", Scopes: []string{"auth"}})
	noAuth := snap.Authorize(tools.Principal{ID: "u1", Tenant: "t1"})
	for _, tc := range []struct {
		name  string
		view  *tools.View
		query string
		k     int
		first string // the tool the request ranks first
		want  string // the companion added ("" for none)
		of    string // the tool it produces for
	}{
		{"token producer added", all, "add an event to my calendar called standup at 9", 5, "cal/add_event", "cal/get_user_token", "cal/add_event"},
		{"producer the caller may not use", noAuth, "add an event to my calendar called standup at 9", 5, "cal/add_event", "", ""},
		{"token the request carries", all, "add an event to my calendar called standup at 9, my token is abc", 5, "cal/add_event", "", ""},
		{"entity id producer added", all, "cancel the meeting and notify the team", 3, "cal/cancel_meeting", "cal/list_meetings", "cal/cancel_meeting"},
		{"entity id the request carries", all, "cancel the meeting MT-48213 and notify the team", 3, "cal/cancel_meeting", "", ""},
		{"no place below the leading tool", all, "add an event to my calendar called standup at 9", 1, "cal/add_event", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDiscoverer(t, nil)
			sl, err := d.Shortlist(context.Background(), tc.view, discovery.Request{Query: tc.query, K: tc.k})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(sl)
			if len(got) == 0 || got[0] != tc.first {
				t.Fatalf("Shortlist(%q) = %v, want %s first", tc.query, got, tc.first)
			}
			var companions []string
			for i, c := range sl.Candidates {
				if _, ok := tc.view.Get(c.Tool.ID); !ok {
					t.Errorf("Shortlist(%q) returned %s, which the caller may not use", tc.query, c.Tool.ID)
				}
				if c.CompanionOf == "" {
					continue
				}
				companions = append(companions, c.Tool.ID)
				if c.CompanionOf != tc.of {
					t.Errorf("%s.CompanionOf = %q, want %q", c.Tool.ID, c.CompanionOf, tc.of)
				}
				for _, after := range sl.Candidates[i+1:] {
					if after.CompanionOf == "" {
						t.Errorf("Shortlist(%q) = %v: ranked tool %s after companion %s", tc.query, got, after.Tool.ID, c.Tool.ID)
					}
				}
			}
			switch {
			case tc.want == "" && len(companions) > 0:
				t.Errorf("Shortlist(%q) companions = %v, want none", tc.query, companions)
			case tc.want != "" && !slices.Equal(companions, []string{tc.want}):
				t.Errorf("Shortlist(%q) = %v, companions %v, want [%s]", tc.query, got, companions, tc.want)
			}
			if len(got) > tc.k {
				t.Errorf("Shortlist(%q) has %d tools, want at most K=%d", tc.query, len(got), tc.k)
			}
		})
	}
}

// TestCompanionsNeverDisplaceClearMatches checks the ranking's clear
// matches against the same shortlist without companions: every tool the
// request ranked at or above the clear-match share of the best score
// (discovery.CompanionClearRatio) stays, in its place. Some shortlist
// must carry a companion, or the comparison would prove nothing.
func TestCompanionsNeverDisplaceClearMatches(t *testing.T) {
	snap := companionCatalog(t)
	view := snap.Authorize(tools.Principal{ID: "u1", Tenant: "t1", Scopes: []string{"auth"}})
	on, off := newDiscoverer(t, nil), newDiscoverer(t, &discovery.Options{NoCompanions: true})
	companions := 0
	for _, q := range []string{
		"add an event to my calendar called standup at 9",
		"set a reminder for the calendar event",
		"cancel the meeting with the design team",
		"list my meetings and cancel the first",
	} {
		t.Run(q, func(t *testing.T) {
			for k := 1; k <= 5; k++ {
				a, err := on.Shortlist(context.Background(), view, discovery.Request{Query: q, K: k})
				if err != nil {
					t.Fatal(err)
				}
				b, err := off.Shortlist(context.Background(), view, discovery.Request{Query: q, K: k})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range a.Candidates {
					if c.CompanionOf != "" {
						companions++
					}
				}
				for i, c := range b.Candidates {
					if c.Score < discovery.CompanionClearRatio*b.Candidates[0].Score {
						break
					}
					if i >= len(a.Candidates) || a.Candidates[i].Tool.ID != c.Tool.ID {
						t.Errorf("K=%d %q: with companions %v, without %v: clear match %s (%.2f of the best) lost its place", k, q, ids(a), ids(b), c.Tool.ID, c.Score/b.Candidates[0].Score)
					}
				}
			}
		})
	}
	if companions == 0 {
		t.Error("no shortlist carried a companion: the check compared two identical rankings")
	}
}
