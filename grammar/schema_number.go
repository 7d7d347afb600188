package grammar

import (
	"math/big"
	"strings"
)

// Numbers with bounds compile to exact digit grammars: the integer part is
// a decimal range without leading zeros, split by sign, and the fraction
// decides the values at the edges (x <= 5 admits 5 and 5.0 but not 5.1).
// Bounded numbers are written without exponent (the canonical form of
// canonicalNumber); unbounded ones take the full JSON number syntax.

// maxBoundDigits is the largest bound, in decimal digits, compiled exactly.
const maxBoundDigits = 400

// fractionNode compiles the numbers left once `not` excludes the integers
// ({"not": {"type": "integer"}}): a decimal whose last fraction digit is
// not zero, the form in which the grammars write non-integral values (an
// integral value such as 1.0 or 1e2 is an integer to JSON Schema). Beside
// bounds or multipleOf the number grammar cannot also exclude integers,
// which is reported.
func (c *compiler) fractionNode(s *jsonValue, ptr string) *gnode {
	n := c.numberNode(s, ptr, false)
	if n.op == gRef && n.rule == c.p.number {
		return seq(opt(lit("-")), alt(lit("0"), seq(nonZeroDigitClass, star(digitClass))), lit("."), star(digitClass), nonZeroDigitClass)
	}
	c.relaxf(ptr, "not", "integers are not excluded from a bounded number; the gateway checks it")
	return n
}

// numberNode compiles numeric keywords. integer restricts to integral
// values written as integers (1, not 1.0: see the package documentation).
func (c *compiler) numberNode(s *jsonValue, ptr string, integer bool) *gnode {
	var lo, hi *big.Rat
	loEx, hiEx := false, false
	tighten := func(k string, lower, excl bool) {
		v := s.get(k)
		if v == nil {
			return
		}
		if v.kind == jsonBool { // draft-04: exclusiveMinimum: true makes minimum exclusive
			return
		}
		r, ok := numberRat(v.s)
		if v.kind != jsonNumber || !ok {
			c.relaxf(ptr, k, "not a number; ignored")
			return
		}
		if lower {
			if lo == nil || r.Cmp(lo) > 0 || (r.Cmp(lo) == 0 && excl) {
				lo, loEx = r, excl
			}
		} else {
			if hi == nil || r.Cmp(hi) < 0 || (r.Cmp(hi) == 0 && excl) {
				hi, hiEx = r, excl
			}
		}
	}
	d4 := func(k string) bool { v := s.get(k); return v != nil && v.kind == jsonBool && v.b }
	tighten("minimum", true, d4("exclusiveMinimum"))
	tighten("maximum", false, d4("exclusiveMaximum"))
	tighten("exclusiveMinimum", true, true)
	tighten("exclusiveMaximum", false, true)

	fracDigits := -1 // unlimited
	if integer {
		fracDigits = 0
	}
	if mv := s.get("multipleOf"); mv != nil && mv.kind == jsonNumber {
		m, ok := numberRat(mv.s)
		switch {
		case !ok || m.Sign() <= 0:
			c.relaxf(ptr, "multipleOf", "not a positive number; ignored")
		case integer && new(big.Rat).Inv(m).IsInt():
			// every integer is a multiple of 1/k
		case !integer && isPowerOfTenInverse(m) >= 0:
			fracDigits = isPowerOfTenInverse(m)
		default:
			c.relaxf(ptr, "multipleOf", "multipleOf %s is not expressible in the grammar; the gateway checks it", mv.s)
		}
	}
	if lo == nil && hi == nil && fracDigits < 0 {
		return ref(c.p.number)
	}
	if lo == nil && hi == nil && fracDigits == 0 && integer {
		return ref(c.p.integer)
	}
	loI, loEx := c.integralBound(s, ptr, lo, loEx, true, fracDigits)
	hiI, hiEx := c.integralBound(s, ptr, hi, hiEx, false, fracDigits)
	if (loI != nil && len(loI.String()) > maxBoundDigits) || (hiI != nil && len(hiI.String()) > maxBoundDigits) {
		c.relaxf(ptr, "minimum", "a bound longer than %d digits is not enforced", maxBoundDigits)
		if integer {
			return ref(c.p.integer)
		}
		return ref(c.p.number)
	}
	return numRange(loI, loEx, hiI, hiEx, fracDigits)
}

// integralBound rounds the lower (or upper) bound b of the number schema s
// to an integer and says whether it is still exclusive. Integer ranges need
// integral bounds: an integral b stays (one step inward when it is
// exclusive and the range holds integers: fracDigits 0); a non-integral b
// rounds inward for integers (exact) and outward, reported, for numbers
// with fraction digits. A nil b stays nil.
func (c *compiler) integralBound(s *jsonValue, ptr string, b *big.Rat, exclusive, lower bool, fracDigits int) (*big.Int, bool) {
	if b == nil {
		return nil, exclusive
	}
	f := floorRat(b)
	step := big.NewInt(1) // inward
	if !lower {
		step.SetInt64(-1)
	}
	if new(big.Rat).SetInt(f).Cmp(b) == 0 {
		if exclusive && fracDigits == 0 {
			return new(big.Int).Add(f, step), false
		}
		return f, exclusive
	}
	in, out := new(big.Int).Add(f, big.NewInt(1)), f // the ceiling and the floor of b
	if !lower {
		in, out = out, in
	}
	if fracDigits == 0 {
		return in, false
	}
	c.relaxf(ptr, boundKeyword(s, lower), "a non-integral bound on a number is enforced as %s", out.String())
	return out, false
}

func boundKeyword(s *jsonValue, lower bool) string {
	if lower {
		if s.has("exclusiveMinimum") {
			return "exclusiveMinimum"
		}
		return "minimum"
	}
	if s.has("exclusiveMaximum") {
		return "exclusiveMaximum"
	}
	return "maximum"
}

// isPowerOfTenInverse returns k when m is 10^-k (k >= 0), else -1.
func isPowerOfTenInverse(m *big.Rat) int {
	if !m.Num().IsInt64() || m.Num().Int64() != 1 {
		return -1
	}
	d := new(big.Int).Set(m.Denom())
	k := 0
	ten := big.NewInt(10)
	for d.Cmp(big.NewInt(1)) > 0 {
		q, r := new(big.Int).QuoRem(d, ten, new(big.Int))
		if r.Sign() != 0 {
			return -1
		}
		d = q
		k++
	}
	return k
}

func floorRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return q // DivMod is Euclidean: floor for a positive denominator
}

// numRange: numbers x with lo <= x (< if loEx) and x <= hi (< if hiEx),
// lo and hi integral (nil: unbounded), at most fracDigits fraction digits
// (< 0: any; 0: integers).
func numRange(lo *big.Int, loEx bool, hi *big.Int, hiEx bool, fracDigits int) *gnode {
	zero := big.NewInt(0)
	var alts []*gnode
	// Non-negative part: magnitude in [max(lo,0), hi].
	if hi == nil || hi.Sign() > 0 || (hi.Sign() == 0 && !hiEx) {
		a, aEx := zero, false
		if lo != nil && lo.Sign() >= 0 {
			a, aEx = lo, loEx
		}
		alts = append(alts, magnitude(a, aEx, hi, hiEx, fracDigits))
	}
	// Negative part: -x in (0, -lo] and -x >= -hi when hi < 0.
	if lo == nil || lo.Sign() < 0 {
		var b *big.Int
		bEx := false
		if lo != nil {
			b, bEx = new(big.Int).Neg(lo), loEx
		}
		a, aEx := zero, true
		if hi != nil && hi.Sign() < 0 {
			a, aEx = new(big.Int).Neg(hi), hiEx
		}
		alts = append(alts, seq(lit("-"), magnitude(a, aEx, b, bEx, fracDigits)))
	}
	return alt(alts...)
}

// magnitude: non-negative decimals m with a <= m (< if aEx), m <= b (< if
// bEx; b nil: unbounded), at most fracDigits fraction digits.
func magnitude(a *big.Int, aEx bool, b *big.Int, bEx bool, fd int) *gnode {
	digit := digitClass
	var fracAny, fracZero, fracNonZero *gnode
	switch {
	case fd < 0:
		fracAny, fracZero, fracNonZero = anyFraction, zeroFraction, nonZeroFraction
	case fd == 0:
		fracAny, fracZero, fracNonZero = nEmpty, nEmpty, nNone
	default:
		fracAny = opt(seq(lit("."), rep(digit, 1, fd)))
		fracZero = opt(seq(lit("."), rep(lit("0"), 1, fd)))
		var nz []*gnode
		for z := 0; z < fd; z++ {
			nz = append(nz, seq(rep(lit("0"), z, z), nonZeroDigitClass, rep(digit, 0, fd-1-z)))
		}
		fracNonZero = seq(lit("."), alt(nz...))
	}
	if b != nil {
		switch a.Cmp(b) {
		case 1:
			return nNone
		case 0:
			if aEx || bEx {
				return nNone
			}
			return seq(lit(a.String()), fracZero)
		}
	}
	var alts []*gnode
	if aEx {
		alts = append(alts, seq(lit(a.String()), fracNonZero))
	} else {
		alts = append(alts, seq(lit(a.String()), fracAny))
	}
	midLo := new(big.Int).Add(a, big.NewInt(1))
	var midHi *big.Int
	if b != nil {
		midHi = new(big.Int).Sub(b, big.NewInt(1))
	}
	if midHi == nil || midLo.Cmp(midHi) <= 0 {
		alts = append(alts, seq(intRange(midLo, midHi), fracAny))
	}
	if b != nil && !bEx {
		alts = append(alts, seq(lit(b.String()), fracZero))
	}
	return alt(alts...)
}

// The fractions of magnitude with any number of digits: any, zero only, and
// not zero. Nodes are immutable, so every compile shares them.
var (
	anyFraction     = opt(seq(lit("."), plus(digitClass)))
	zeroFraction    = opt(seq(lit("."), plus(lit("0"))))
	nonZeroFraction = seq(lit("."), star(lit("0")), nonZeroDigitClass, star(digitClass))
)

// intRange: the decimal integers in [lo, hi] (lo >= 0; hi nil: unbounded)
// without leading zeros.
func intRange(lo, hi *big.Int) *gnode {
	los := lo.String()
	digit := digitClass
	var alts []*gnode
	if hi == nil {
		alts = append(alts, sameLen(los, strings.Repeat("9", len(los))))
		alts = append(alts, seq(nonZeroDigitClass, rep(digit, len(los), -1)))
		return alt(alts...)
	}
	his := hi.String()
	for l := len(los); l <= len(his); l++ {
		a, b := los, his
		if l > len(los) {
			a = "1" + strings.Repeat("0", l-1)
		}
		if l < len(his) {
			b = strings.Repeat("9", l)
		}
		alts = append(alts, sameLen(a, b))
	}
	return alt(alts...)
}

// sameLen: the digit strings of one length between lo and hi.
func sameLen(lo, hi string) *gnode {
	if lo == hi {
		return lit(lo)
	}
	n := len(lo)
	digit := digitClass
	if n == 1 {
		return class(crange{Lo: rune(lo[0]), Hi: rune(hi[0])})
	}
	if lo[0] == hi[0] {
		return seq(lit(lo[:1]), sameLen(lo[1:], hi[1:]))
	}
	var alts []*gnode
	start, end := lo[0], hi[0]
	if strings.Trim(lo[1:], "0") != "" {
		alts = append(alts, seq(lit(lo[:1]), sameLen(lo[1:], strings.Repeat("9", n-1))))
		start++
	}
	var tail *gnode
	if strings.Trim(hi[1:], "9") != "" {
		tail = seq(lit(hi[:1]), sameLen(strings.Repeat("0", n-1), hi[1:]))
		end--
	}
	if start <= end {
		alts = append(alts, seq(class(crange{Lo: rune(start), Hi: rune(end)}), rep(digit, n-1, n-1)))
	}
	if tail != nil {
		alts = append(alts, tail)
	}
	return alt(alts...)
}
