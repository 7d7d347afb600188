package ledger

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Cents is an amount of US dollars in integer cents. Money is never a float
// inside the ledger.
type Cents int64

// MaxCents bounds any single amount (one trillion dollars), far below the
// int64 range, so sums of a few amounts cannot overflow.
const MaxCents Cents = 100_000_000_000_000

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// ErrAmount is wrapped by ParseAmount's errors.
var ErrAmount = errors.New("ledger: invalid amount")

// ParseAmount converts the text of a JSON number of dollars ("12.5",
// "1000.00", "1e2") into cents, exactly: the value must be a whole number of
// cents (at most two significant decimals, so "10.50" and "10.500" are 1050
// cents but "10.005" is refused), positive, and at most [MaxCents]. Reading
// the decimal text instead of a float64 is what makes "at most 2 decimals"
// decidable: 0.1+0.2 style rounding never enters.
func ParseAmount(text string) (Cents, error) {
	s := strings.TrimSpace(text)
	if len(s) > 64 {
		return 0, fmt.Errorf("%w: %q is too long", ErrAmount, text)
	}
	if !jsonNumber.MatchString(s) {
		return 0, fmt.Errorf("%w: %q is not a JSON number", ErrAmount, text)
	}
	// [big.Rat] accepts exponents; bound them so "1e999999999" cannot make it
	// allocate a huge integer.
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil || exp > 20 || exp < -20 {
			return 0, fmt.Errorf("%w: %q has an out-of-range exponent", ErrAmount, text)
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("%w: %q is not a decimal number", ErrAmount, text)
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() {
		return 0, fmt.Errorf("%w: %s has more than 2 decimals", ErrAmount, text)
	}
	n := r.Num()
	if n.Sign() <= 0 {
		return 0, fmt.Errorf("%w: %s is not positive", ErrAmount, text)
	}
	if !n.IsInt64() || Cents(n.Int64()) > MaxCents {
		return 0, fmt.Errorf("%w: %s is too large", ErrAmount, text)
	}
	return Cents(n.Int64()), nil
}

// String formats c as dollars with two decimals: "1000.00", "-0.05".
func (c Cents) String() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalJSON writes c as a JSON number with two decimals (1000.00), so a
// reader sees dollars and no float rounding is involved.
func (c Cents) MarshalJSON() ([]byte, error) { return []byte(c.String()), nil }
