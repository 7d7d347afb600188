package grammar

import (
	"math/big"
)

// A small validator for the places where the compiler must decide
// membership of a known value (enum and const values, declared names).

// admits is a small validator used to filter enum and const values and
// declared property names; keywords it does not know count as satisfied.
func (c *compiler) admits(s, v *jsonValue, depth int) bool {
	return c.admitsAs(s, v, depth, false)
}

// admitsAs is admits; ownValue says that v is one of s's own enum values,
// so that checking s's enum again (quadratic over a large enum) is skipped.
func (c *compiler) admitsAs(s, v *jsonValue, depth int, ownValue bool) bool {
	if depth > 16 {
		return true
	}
	switch s.kind {
	case jsonBool:
		return s.b
	case jsonObject:
	default:
		return true
	}
	if r := s.get("$ref"); r != nil && r.kind == jsonString {
		if t, ok := c.resolve(s, r.s); ok && !c.admits(t, v, depth+1) {
			return false
		}
	}
	t := typeOf(v)
	if schemaTypes(s)&t == 0 {
		return false
	}
	if cv := s.get("const"); cv != nil && !jsonEqual(cv, v) {
		return false
	}
	if ev := s.get("enum"); ev != nil && ev.kind == jsonArray && !ownValue {
		found := false
		for _, e := range ev.arr {
			if jsonEqual(e, v) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		br := s.get(k)
		if br == nil || br.kind != jsonArray {
			continue
		}
		n := 0
		for _, b := range br.arr {
			if c.admits(b, v, depth+1) {
				n++
			}
		}
		switch {
		case k == "allOf" && n != len(br.arr), k == "anyOf" && n == 0, k == "oneOf" && n != 1:
			return false
		}
	}
	if nt := s.get("not"); nt != nil && c.admits(nt, v, depth+1) && c.exactlyChecked(nt) {
		return false
	}
	switch v.kind {
	case jsonString:
		n := len([]rune(v.s))
		if m := intKeyword(s, "minLength"); m >= 0 && n < m {
			return false
		}
		if m := intKeyword(s, "maxLength"); m >= 0 && n > m {
			return false
		}
		if p := s.get("pattern"); p != nil && p.kind == jsonString {
			if ok, known := c.nameMatches(p.s, v.s, pointerJoin(c.ptrOf(s, ""), "pattern"), "pattern"); known && !ok {
				return false
			}
		}
	case jsonNumber:
		r, ok := numberRat(v.s)
		if !ok {
			return true
		}
		if !numberInBounds(s, r) {
			return false
		}
	case jsonArray:
		if m := intKeyword(s, "minItems"); m >= 0 && len(v.arr) < m {
			return false
		}
		if m := intKeyword(s, "maxItems"); m >= 0 && len(v.arr) > m {
			return false
		}
		if it := s.get("items"); it != nil && it.kind != jsonArray {
			start := 0
			if pi := s.get("prefixItems"); pi != nil && pi.kind == jsonArray {
				start = len(pi.arr)
			}
			for i := start; i < len(v.arr); i++ {
				if !c.admits(it, v.arr[i], depth+1) {
					return false
				}
			}
		}
	case jsonObject:
		if rv := s.get("required"); rv != nil && rv.kind == jsonArray {
			for _, r := range rv.arr {
				if r.kind == jsonString && v.get(r.s) == nil {
					return false
				}
			}
		}
		props := s.get("properties")
		for i, k := range v.keys {
			if ps := props.get(k); ps != nil {
				if !c.admits(ps, v.vals[i], depth+1) {
					return false
				}
			} else if ap := s.get("additionalProperties"); ap != nil && !c.matchesAnyPattern(s, k) && !c.admits(ap, v.vals[i], depth+1) {
				return false
			}
		}
	}
	return true
}

// exactlyChecked: admits decides s exactly (used before trusting `not`).
func (c *compiler) exactlyChecked(s *jsonValue) bool {
	if s.kind == jsonBool {
		return true
	}
	for _, k := range s.keys {
		switch k {
		case "type", "const", "enum", "minLength", "maxLength", "pattern", "minimum", "maximum",
			"exclusiveMinimum", "exclusiveMaximum", "title", "description":
		default:
			return false
		}
	}
	return true
}

// numberInBounds checks minimum/maximum/exclusive bounds and multipleOf.
func numberInBounds(s *jsonValue, r *big.Rat) bool {
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		b := s.get(k)
		if b == nil || b.kind != jsonNumber {
			continue
		}
		br, ok := numberRat(b.s)
		if !ok {
			continue
		}
		cmp := r.Cmp(br)
		switch k {
		case "minimum":
			if cmp < 0 {
				return false
			}
		case "maximum":
			if cmp > 0 {
				return false
			}
		case "exclusiveMinimum":
			if cmp <= 0 {
				return false
			}
		case "exclusiveMaximum":
			if cmp >= 0 {
				return false
			}
		case "multipleOf":
			if br.Sign() > 0 && !new(big.Rat).Quo(r, br).IsInt() {
				return false
			}
		}
	}
	return true
}
