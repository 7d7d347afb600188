package discovery

import (
	"encoding/json"
	"testing"
)

func TestParamHandle(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		want handle
	}{
		{"token", true, handle{word: "token"}},
		{"access_token", true, handle{word: "token", qual: "access"}},
		{"sessionToken", true, handle{word: "token", qual: "session"}},
		{"session", true, handle{word: "session"}},
		{"meeting_id", true, handle{entity: "meet"}},
		{"calendarEventId", true, handle{entity: "event", qual: "calendar"}},
		{"reminder_ids", true, handle{entity: "remind"}},
		{"id", false, handle{}},
		{"title", false, handle{}},
		{"token_count_of_the_prompt", false, handle{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := paramHandle(tc.name)
			if ok != tc.ok || got != tc.want {
				t.Errorf("paramHandle(%q) = %+v, %v, want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestNameObject(t *testing.T) {
	for _, tc := range []struct{ words, want string }{
		{"list_events", "event"},
		{"get_province_id", "provinc"},
		{"QueryMeeting", "meet"},
		{"get_all_user_list", "user"},
		{"token", ""},
	} {
		t.Run(tc.words, func(t *testing.T) {
			if got := nameObject(functionWords(tc.words)); got != tc.want {
				t.Errorf("nameObject(%q) = %q, want %q", tc.words, got, tc.want)
			}
			if got, _ := toolNameObject([]byte("earlier words"), tc.words); got != tc.want {
				t.Errorf("toolNameObject(%q) = %q, want %q", tc.words, got, tc.want)
			}
		})
	}
}

func TestIDLike(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		want bool
	}{
		{"rl50", true}, {"6e123", true}, {"e97531", true}, {"48213", true}, {"123", true}, {"4521", true},
		{"16th", false}, {"2pm", false}, {"2023", false}, {"1999", false}, {"15", false}, {"meeting", false}, {"5km", false},
	} {
		t.Run(tc.tok, func(t *testing.T) {
			if got := idLike(tc.tok); got != tc.want {
				t.Errorf("idLike(%q) = %v, want %v", tc.tok, got, tc.want)
			}
		})
	}
}

func TestSchemaHandlesRequired(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         int
	}{
		{"required lists it", `{"properties":{"token":{},"title":{}},"required":["token"]}`, 1},
		{"required leaves it out", `{"properties":{"token":{},"title":{}},"required":["title"]}`, 0},
		{"no required: every property", `{"properties":{"token":{},"meeting_id":{}}}`, 2},
		{"required names no property", `{"properties":{"title":{}},"required":["token"]}`, 0},
		{"not an object", `[1,2]`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schemaHandles("ns", json.RawMessage(tc.schema)); len(got) != tc.want {
				t.Errorf("schemaHandles(%s) = %+v, want %d handles", tc.schema, got, tc.want)
			}
		})
	}
}

// FuzzSchemaHandles reads arbitrary input schemas and parameter names:
// never a panic, and every handle has exactly one of word and entity.
func FuzzSchemaHandles(f *testing.F) {
	f.Add(`{"properties":{"token":{"description":"The user's token."},"meeting_id":{}},"required":["token"]}`)
	f.Add(`{"properties":{"a_b_c_d_id":{},"ID":{},"x":{"description":7}},"required":"token"}`)
	f.Fuzz(func(t *testing.T, schema string) {
		for _, p := range schemaHandles("ns", json.RawMessage(schema)) {
			if (p.h.word == "") == (p.h.entity == "") {
				t.Errorf("schemaHandles(%q): handle %+v has not exactly one of word and entity", schema, p.h)
			}
		}
	})
}

// FuzzToolNameObject holds toolNameObject to the two functions it joins.
func FuzzToolNameObject(f *testing.F) {
	for _, s := range []string{"list_events", "get_province_id", "QueryMeeting", "get_all_user_list", "token",
		"a.b.create_user_id", "", "x_", "__list", "getHTTPResponseID", "mod.sub.", "Ünïcode_Name", "ids_list_uuid"} {
		f.Add(s)
	}
	var buf []byte
	f.Fuzz(func(t *testing.T, name string) {
		var got string
		got, buf = toolNameObject(buf, name)
		if want := nameObject(functionWords(name)); got != want {
			t.Errorf("toolNameObject(%q) = %q, nameObject(functionWords) = %q", name, got, want)
		}
	})
}
