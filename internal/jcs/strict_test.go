package jcs

import (
	"errors"
	"testing"
)

func TestUnmarshal(t *testing.T) {
	type doc struct {
		Scopes []string `json:"scopes"`
	}
	tests := []struct {
		in      string
		want    []string
		wantMsg string // the *SyntaxError's Msg; "" for success
	}{
		{`{"scopes":["admin"]}`, []string{"admin"}, ""},
		{`{"scopes":["admin"],"scopes":[]}`, nil, `duplicate member name "scopes"`},
		{`{"scopes":[],"x":{"a":1,"b":{"c":2,"c":3}}}`, nil, `duplicate member name "c"`},
		{`{"scopes":["a"]} x`, nil, "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var got doc
			err := Unmarshal([]byte(tc.in), &got)
			if tc.wantMsg == "" {
				if err != nil || len(got.Scopes) != len(tc.want) || got.Scopes[0] != tc.want[0] {
					t.Errorf("Unmarshal(%s) = %+v, %v; want %v, nil", tc.in, got, err, tc.want)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) || se.Msg != tc.wantMsg {
				t.Errorf("Unmarshal(%s) error = %v, want a *SyntaxError %q wrapping ErrSyntax", tc.in, err, tc.wantMsg)
			}
			if got.Scopes != nil {
				t.Errorf("Unmarshal(%s) filled %+v despite the error", tc.in, got)
			}
		})
	}
}
