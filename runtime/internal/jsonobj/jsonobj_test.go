package jsonobj

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnique(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	for _, tc := range []struct {
		in   string
		want string // "" accepted, else a substring of the error
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, ""},
		{`null`, ""},
		{`[]`, ""},
		{`"x"`, ""},
		{`{"a":1,"a":2}`, `document: member "a" appears twice`},
		{`{"p":{"q":[1,{"x":1,"x":1}]}}`, `/p/q/1: member "x" appears twice`},
		{`{"a":1} {"b":2}`, "trailing data"},
		{`{"a":`, "EOF"},
		{`{"a":1,}`, "invalid"},
		{deep, "nested deeper"},
	} {
		err := Unique([]byte(tc.in))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Unique(%.30s) = %v, want nil", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Unique(%.30s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func FuzzUnique(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":[{"b":1}]}`, `[1,2]`, `null`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if Unique(in) == nil && !json.Valid(in) {
			t.Fatalf("Unique accepted invalid JSON %q", in)
		}
	})
}
