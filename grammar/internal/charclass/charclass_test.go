package charclass

import (
	"slices"
	"testing"
	"unicode/utf8"
)

type r = struct{ Lo, Hi rune }

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []r
	}{
		{"none", nil, nil},
		{"already normal", []r{{'a', 'c'}, {'x', 'x'}}, []r{{'a', 'c'}, {'x', 'x'}}},
		{"unsorted", []r{{'x', 'z'}, {'a', 'c'}}, []r{{'a', 'c'}, {'x', 'z'}}},
		{"empty range dropped", []r{{'c', 'a'}, {'x', 'x'}}, []r{{'x', 'x'}}},
		{"overlapping merged", []r{{'a', 'm'}, {'f', 'z'}}, []r{{'a', 'z'}}},
		{"adjacent merged", []r{{'d', 'f'}, {'a', 'c'}}, []r{{'a', 'f'}}},
		{"contained merged", []r{{'a', 'z'}, {'c', 'd'}}, []r{{'a', 'z'}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := Normalize(in); !slices.Equal(got, tc.want) || !Normal(got) {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("Normalize(%q) changed its argument to %q", tc.in, in)
			}
		})
	}
}

func TestComplement(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []r
	}{
		{"none is everything", nil, []r{{0, utf8.MaxRune}}},
		{"everything is none", []r{{0, utf8.MaxRune}}, nil},
		{"inner ranges", []r{{'x', 'z'}, {'a', 'c'}}, []r{{0, 'a' - 1}, {'c' + 1, 'x' - 1}, {'z' + 1, utf8.MaxRune}}},
		{"edges", []r{{0, 9}, {utf8.MaxRune, utf8.MaxRune}}, []r{{10, utf8.MaxRune - 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Complement(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Complement(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
