package jcs

import (
	"encoding/json"
	"math"
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
			if _, loss := ParseNumber(tc.num); (loss == LossNone) != tc.want {
				t.Errorf("ParseNumber(%q) loss = %v, want exact %v", tc.num, loss, tc.want)
			}
		})
	}
}

// TestParseNumber: the double and the loss of a literal, one row per kind
// of loss.
func TestParseNumber(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		num  string
		f    float64
		loss Loss
	}{
		{"1e400", inf, LossOverflow},
		{"-1e400", -inf, LossOverflow},
		{"-0", math.Copysign(0, -1), LossNone},
		{"0e-999", 0, LossNone},
		{"9007199254740992", 9007199254740992, LossNone},
		{"9007199254740993", 9007199254740992, LossDigits},
		{"1.00000000000000001", 1, LossDigits},
		{"250.50", 250.5, LossNone},
		{"2.5e2", 250, LossNone},
		{"4e-324", 5e-324, LossDigits},
		{"1e-400", 0, LossUnderflow},
		{"-1e-400", math.Copysign(0, -1), LossUnderflow},
		{"0x10", 0, LossSyntax},
		{"Inf", 0, LossSyntax},
		{"+1", 0, LossSyntax},
		{"01", 0, LossSyntax},
		{"1.", 0, LossSyntax},
		{"1 ", 0, LossSyntax},
		{"", 0, LossSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.num, func(t *testing.T) {
			f, loss := ParseNumber(tc.num)
			if loss != tc.loss || f != tc.f || math.Signbit(f) != math.Signbit(tc.f) {
				t.Errorf("ParseNumber(%q) = %v, %v; want %v, %v", tc.num, f, loss, tc.f, tc.loss)
			}
		})
	}
}

// FuzzParseNumber: a literal Parse accepts is never [LossSyntax], and its
// double is ParseFloat's; text Parse refuses as a whole (or reads as
// another kind of value) is [LossSyntax]; an overflow is infinite, an
// underflow zero, and any other double finite.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1", "-0", "1e400", "1e-400", "9007199254740993", "1.00000000000000001", "0x10", "+1", "1."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, loss := ParseNumber(s)
		v, err := Parse([]byte(s))
		_, isNumber := v.(json.Number)
		literal := err == nil && isNumber && strings.TrimSpace(s) == s
		if literal == (loss == LossSyntax) {
			t.Fatalf("ParseNumber(%q) loss = %v, but Parse reads a number literal: %v", s, loss, literal)
		}
		if loss == LossSyntax {
			return
		}
		if want, _ := strconv.ParseFloat(s, 64); got != want {
			t.Fatalf("ParseNumber(%q) = %v, want ParseFloat's %v", s, got, want)
		}
		switch {
		case loss == LossOverflow && !math.IsInf(got, 0),
			loss == LossUnderflow && got != 0,
			loss != LossOverflow && math.IsInf(got, 0):
			t.Fatalf("ParseNumber(%q) = %v, %v", s, got, loss)
		}
	})
}

// FuzzExact checks ParseNumber's [LossNone] against exact rational arithmetic on what
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
			return // keep the [big.Rat] oracle cheap
		}
		_, loss := ParseNumber(num)
		got := loss == LossNone
		fl, err := strconv.ParseFloat(num, 64)
		if err != nil {
			if got {
				t.Fatalf("ParseNumber(%q) is exact, but ParseFloat fails: %v", num, err)
			}
			return
		}
		canon, err := AppendNumber(nil, fl)
		if err != nil {
			return
		}
		want := sameDecimal(t, num, string(canon))
		if got != want {
			t.Fatalf("ParseNumber(%q) exact = %v, but canonical %s equal = %v", num, got, canon, want)
		}
	})
}

// sameDecimal compares two number literals exactly ([big.Rat]), for the
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
