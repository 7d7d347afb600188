package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var modelNameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestModelName(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		id    string
		taken []string
		want  string
	}{
		{"github/create_issue", nil, "create_issue"},
		{"github/create_issue", []string{"create_issue"}, "github__create_issue"},
		{"bfcl/math.factorial", nil, "math_factorial"},
		{"ns/héllo wörld", nil, "h_llo_w_rld"},
		{"ns/" + long, nil, "ns__" + strings.Repeat("x", 64-4-9) + "_" + hash8("ns/"+long)},
		{"a/b", []string{"b", "a__b"}, "a__b"[:4] + "_" + hash8("a/b")},
		{"a/b", []string{"b", "a__b", "a__b_" + hash8("a/b")}, "a__b_" + hash8("a/b") + "2"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			taken := map[string]bool{}
			for _, n := range tt.taken {
				taken[n] = true
			}
			got := ModelName(tt.id, func(n string) bool { return taken[n] })
			if got != tt.want {
				t.Errorf("ModelName(%q, taken %v) = %q, want %q", tt.id, tt.taken, got, tt.want)
			}
		})
	}
	if got := ModelName("x/y", nil); got != "y" {
		t.Errorf("ModelName(x/y, nil) = %q, want y", got)
	}
}

// hash8 is the first 8 hex digits of the SHA-256 of id.
func hash8(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// TestModelNameUnique names many colliding IDs in one catalog: every name
// fits the model rule and no two tools share one.
func TestModelNameUnique(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	taken := map[string]string{}
	names := []string{"create_issue", "create.issue", "create issue", "ünïcode", strings.Repeat("long_name", 9), "x"}
	for i := range 2000 {
		id := fmt.Sprintf("%s%d/%s", []string{"gh", "gl", "very.long-namespace_" + strings.Repeat("n", 40)}[rng.IntN(3)], rng.IntN(5), names[rng.IntN(len(names))])
		if rng.IntN(10) == 0 {
			id += fmt.Sprint(i)
		}
		if _, dup := taken[id]; dup {
			continue
		}
		name := ModelName(id, func(n string) bool { _, ok := taken[n]; return ok })
		if !modelNameRule.MatchString(name) {
			t.Fatalf("ModelName(%q) = %q breaks the model name rule", id, name)
		}
		if _, ok := taken[name]; ok {
			t.Fatalf("ModelName(%q) = %q, already taken", id, name)
		}
		taken[name] = id
		taken[id] = id // IDs themselves never collide with names in this test
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		tool Tool
		ok   bool
	}{
		{Tool{ID: "ns/a", Card: Card{Name: "a"}}, true},
		{Tool{ID: "ns/a/b", Card: Card{Name: "a/b"}}, true},
		{Tool{ID: "ns/math.factorial", Card: Card{Name: "math.factorial"}, InputSchema: []byte(`{}`)}, true},
		{Tool{ID: "a", Card: Card{Name: "a"}}, false},
		{Tool{ID: "/a", Card: Card{Name: "a"}}, false},
		{Tool{ID: "n s/a", Card: Card{Name: "a"}}, false},
		{Tool{ID: "ns/ ", Card: Card{Name: " "}}, false},
		{Tool{ID: "ns/a\u0085b", Card: Card{Name: "a\u0085b"}}, false},
		{Tool{ID: "ns/a", Card: Card{Name: "b"}}, false},
		{Tool{ID: "ns/a", Card: Card{Name: "a", Scopes: []string{""}}}, false},
		{Tool{ID: "ns/a", Card: Card{Name: "a"}, InputSchema: []byte(`"x"`)}, false},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err := tt.tool.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate(%q) = %v, want ok %v", tt.tool.ID, err, tt.ok)
			}
		})
	}
}

// FuzzIsObjectJSON: the scan Validate makes of an input schema accepts
// exactly what [json.Unmarshal] takes into a map.
func FuzzIsObjectJSON(f *testing.F) {
	for _, s := range []string{`{}`, ` {"a":[1,{"b":null}]} `, `null`, `nul`, `[1]`, `"x"`, `{"a":1}x`, `{"a":1,"a":2}`, "{\"\xff\":1}", ``, ` `, `n`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m map[string]json.RawMessage
		want := json.Unmarshal(raw, &m) == nil
		if got := isObjectJSON(raw); got != want {
			t.Errorf("isObjectJSON(%q) = %v, json.Unmarshal into a map succeeds: %v", raw, got, want)
		}
	})
}
