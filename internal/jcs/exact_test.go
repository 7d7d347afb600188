package jcs

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

func TestExact(t *testing.T) {
	tests := []struct {
		num  string
		want bool
	}{
		{"0", true}, {"-0", true}, {"0.0", true}, {"0e999999999999", true}, {"1", true}, {"1.50", true},
		{"15e-1", true}, {"250.50", true}, {"0.1", true}, {"0.30000000000000004", true},
		{"9007199254740992", true}, {"9007199254740993", false}, {"9007199254740993.0", false},
		{"9.007199254740993e15", false}, {"90071992547409930e-1", false}, {"9007199254740993E0", false},
		{"1.0000000000000000001", false}, {"1.00000000000000000000", true}, {"123456789012345678", false},
		{"1e308", true}, {"1.7976931348623157e308", true}, {"1e-400", false}, {"5e-324", true}, {"4e-324", false},
		{"1e400", false}, {"1e+00000000000000000002", true}, {"-2.5E-3", true}, {"3.141592653589793238", false},
		{"", false}, {"abc", false}, {"0x10", false}, {"0x1p-2", false}, {"1_0", false}, {"infinity", false}, {"NaN", false}, {"Inf", false},
	}
	for _, tc := range tests {
		t.Run(tc.num, func(t *testing.T) {
			if got := Exact(tc.num); got != tc.want {
				t.Errorf("Exact(%q) = %v, want %v", tc.num, got, tc.want)
			}
		})
	}
}

// FuzzExact checks Exact against exact rational arithmetic on what
// canonicalization writes: a number is exact iff its canonical text parses
// back to the same value as the original text, compared as decimals.
func FuzzExact(f *testing.F) {
	for _, s := range []string{"1", "1.0000000000000000001", "9.007199254740993e15", "5e-324", "0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse([]byte(s))
		n, ok := v.(interface{ String() string })
		if err != nil || !ok {
			return
		}
		num := n.String()
		if _, e, ok := strings.Cut(strings.ToLower(num), "e"); ok && len(strings.TrimLeft(strings.TrimLeft(e, "+-"), "0")) > 3 {
			return // keep the big.Rat oracle cheap
		}
		got := Exact(num)
		fl, err := strconv.ParseFloat(num, 64)
		if err != nil {
			if got {
				t.Fatalf("Exact(%q) = true, but ParseFloat fails: %v", num, err)
			}
			return
		}
		canon, err := AppendNumber(nil, fl)
		if err != nil {
			return
		}
		want := sameDecimal(t, num, string(canon))
		if got != want {
			t.Fatalf("Exact(%q) = %v, but canonical %s equal = %v", num, got, canon, want)
		}
	})
}

// sameDecimal compares two number literals exactly (big.Rat), for the
// fuzz target's oracle; exponents are small in what it is given.
func sameDecimal(t *testing.T, a, b string) bool {
	t.Helper()
	ra, ok1 := new(big.Rat).SetString(a)
	rb, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return false
	}
	return ra.Cmp(rb) == 0
}
