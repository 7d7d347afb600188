package grammar

import (
	"strconv"
	"strings"
)

// Applicators: $ref, allOf, anyOf and oneOf are expanded into a union of
// merged schemas without applicators (flatten), so that the keywords of
// all parts meet in one place where they can be compiled together.

// flatten expands $ref, allOf, anyOf and oneOf into a union of merged
// schemas without applicators. Branches that cannot be satisfied are
// dropped.
func (c *compiler) flatten(s *jsonValue, ptr string) []*jsonValue {
	switch s.kind {
	case jsonBool:
		if s.b {
			return []*jsonValue{newObject()}
		}
		return nil
	case jsonObject:
	default:
		return []*jsonValue{newObject()}
	}
	if alreadyFlat(s) {
		return []*jsonValue{s} // the clone below would change nothing
	}
	base := s.clone()
	for _, k := range []string{"$ref", "allOf", "anyOf", "oneOf"} {
		base.del(k)
	}
	if n := base.get("nullable"); n != nil && n.kind == jsonBool && n.b && base.has("type") {
		base.set("type", typeValue(schemaTypes(base)))
		base.del("nullable")
	}
	if s.has("anyOf") && (base.has("unevaluatedProperties") || base.has("unevaluatedItems")) {
		// Several anyOf branches can match and all of them evaluate.
		c.relaxf(ptr, "unevaluatedProperties", "beside anyOf, unevaluatedProperties/unevaluatedItems are not enforced")
		base.del("unevaluatedProperties")
		base.del("unevaluatedItems")
	}
	parts := [][]*jsonValue{{base}}
	parts = append(parts, c.dependencies(base, ptr)...)
	if r := s.get("$ref"); r != nil {
		if r.kind != jsonString {
			c.relaxf(ptr, "$ref", "$ref is not a string; ignored")
		} else if target, ok := c.resolve(s, r.s); !ok {
			c.relaxf(ptr, "$ref", "cannot resolve %q (only references inside the schema document are followed); not enforced", r.s)
			if base.has("unevaluatedProperties") || base.has("unevaluatedItems") {
				c.relaxf(ptr, "unevaluatedProperties", "what the unresolved $ref evaluates is unknown; unevaluated* not enforced")
				base.del("unevaluatedProperties")
				base.del("unevaluatedItems")
			}
		} else if c.inlining(target) || len(c.inline) > 16 {
			// A recursive reference merged with sibling keywords: keep the
			// reference as a rule and enforce the siblings' type at most.
			c.relaxf(ptr, "$ref", "a recursive $ref beside other keywords; the keywords beside it are not merged into the recursion")
			marker := newObject()
			marker.set("\x00ref", &jsonValue{kind: jsonString, s: r.s})
			marker.set("\x00at", s)
			return []*jsonValue{marker}
		} else {
			c.inline = append(c.inline, target)
			parts = append(parts, c.flatten(target, c.ptrOf(target, ptr)))
			c.inline = c.inline[:len(c.inline)-1]
		}
	}
	if al := s.get("allOf"); al != nil && al.kind == jsonArray {
		for i, a := range al.arr {
			parts = append(parts, c.flatten(a, pointerJoin(ptr, "allOf", strconv.Itoa(i))))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		br := s.get(k)
		if br == nil || br.kind != jsonArray {
			continue
		}
		if k == "oneOf" {
			if excl, ok := c.exclusiveRequired(br); ok {
				parts = append(parts, excl)
				continue
			}
			c.checkOneOf(s, br, ptr)
		}
		var union []*jsonValue
		for i, b := range br.arr {
			union = append(union, c.flatten(b, pointerJoin(ptr, k, strconv.Itoa(i)))...)
		}
		parts = append(parts, union)
	}
	out := parts[0]
	for _, part := range parts[1:] {
		var next []*jsonValue
		for _, a := range out {
			for _, b := range part {
				if m, ok := c.merge(a, b, ptr); ok {
					next = append(next, m)
				}
			}
		}
		if len(next) > maxBranches {
			c.relaxf(ptr, "anyOf", "more than %d combined branches; the combination is not enforced", maxBranches)
			next = []*jsonValue{newObject()}
		}
		out = next
	}
	return out
}

// alreadyFlat reports whether flatten would return s unchanged: an object
// schema with none of the keywords it rewrites (most schemas of a tool's
// arguments). Flat schemas are only read, so s itself stands for its copy.
func alreadyFlat(s *jsonValue) bool {
	for _, k := range s.keys {
		switch k {
		case "$ref", "allOf", "anyOf", "oneOf", "nullable", "dependentRequired", "dependentSchemas", "dependencies":
			return false
		}
	}
	return true
}

func (c *compiler) inlining(t *jsonValue) bool {
	for _, x := range c.inline {
		if x == t {
			return true
		}
	}
	return false
}

// allOfOf returns a schema for "a and b". The same pair always gives the
// same node, and value compiles such nodes once into a rule, so merges that
// recur through recursive references end in a rule reference instead of
// unrolling.
func (c *compiler) allOfOf(a, b *jsonValue) *jsonValue {
	key := [2]*jsonValue{a, b}
	if n, ok := c.pairs[key]; ok {
		return n
	}
	if c.allOfContains(a, b, 0) {
		return a
	}
	if c.allOfContains(b, a, 0) {
		return b
	}
	n := allOfPair(a, b)
	if n != a && n != b {
		if c.synthetic == nil {
			c.synthetic = map[*jsonValue]bool{}
		}
		c.synthetic[n] = true
	}
	if c.pairs == nil {
		c.pairs = map[[2]*jsonValue]*jsonValue{}
	}
	c.pairs[key] = n
	return n
}

// allOfContains reports whether s is x or a conjunction made by allOfOf
// that includes x: "x and x" is x.
func (c *compiler) allOfContains(s, x *jsonValue, depth int) bool {
	if s == x {
		return true
	}
	if depth > 32 || !c.synthetic[s] {
		return false
	}
	al := s.get("allOf")
	if al == nil {
		return false
	}
	for _, e := range al.arr {
		if c.allOfContains(e, x, depth+1) {
			return true
		}
	}
	return false
}

func allOfPair(a, b *jsonValue) *jsonValue {
	if a.kind == jsonBool && a.b {
		return b
	}
	if b.kind == jsonBool && b.b {
		return a
	}
	if a.kind == jsonBool || b.kind == jsonBool {
		return newBool(false)
	}
	if len(a.keys) == 0 {
		return b
	}
	if len(b.keys) == 0 {
		return a
	}
	o := newObject()
	o.set("allOf", &jsonValue{kind: jsonArray, arr: []*jsonValue{a, b}})
	return o
}

// merge intersects two flat schemas. ok is false when no value can satisfy
// both.
func (c *compiler) merge(a, b *jsonValue, ptr string) (*jsonValue, bool) {
	if c.step(ptr) {
		return nil, false
	}
	if a.has("\x00ref") {
		if len(b.keys) > 0 {
			c.relaxf(ptr, "$ref", "keywords beside a recursive $ref are not enforced")
		}
		return a, true
	}
	if b.has("\x00ref") {
		if len(a.keys) > 0 {
			c.relaxf(ptr, "$ref", "keywords beside a recursive $ref are not enforced")
		}
		return b, true
	}
	m := a.clone()
	// additionalProperties of one side constrain the properties only the
	// other side declares.
	mergedProps := c.mergeProps(a, b)
	if mergedProps != nil {
		c.steps += len(mergedProps.keys) / 8
	}
	for i, k := range b.keys {
		bv := b.vals[i]
		av := m.get(k)
		if av == nil {
			m.set(k, bv)
			continue
		}
		switch k {
		case "type":
			t := schemaTypes(a) & schemaTypes(b)
			if t == 0 {
				return nil, false
			}
			m.set("type", typeValue(t))
			m.del("nullable")
		case "properties", "additionalProperties":
			// below
		case "patternProperties":
			pp := av.clone()
			for j, pk := range bv.keys {
				if x := pp.get(pk); x != nil {
					pp.set(pk, c.allOfOf(x, bv.vals[j]))
				} else {
					pp.set(pk, bv.vals[j])
				}
			}
			m.set(k, pp)
		case "required":
			req := av.clone()
			for _, r := range bv.arr {
				found := false
				for _, x := range req.arr {
					if x.kind == jsonString && r.kind == jsonString && x.s == r.s {
						found = true
					}
				}
				if !found {
					req.arr = append(req.arr, r)
				}
			}
			m.set(k, req)
		case "minLength", "minItems", "minProperties", "minimum":
			if numLess(av, bv) {
				m.set(k, bv)
			}
		case "maxLength", "maxItems", "maxProperties", "maximum":
			if numLess(bv, av) {
				m.set(k, bv)
			}
		case "exclusiveMinimum", "exclusiveMaximum":
			if av.kind == jsonNumber && bv.kind == jsonNumber {
				if (k == "exclusiveMinimum") == numLess(av, bv) {
					m.set(k, bv)
				}
			} else if canonicalJSON(av) != canonicalJSON(bv) {
				c.relaxf(ptr, k, "allOf: boolean %s forms could not be merged; the first is enforced", k)
			}
		case "uniqueItems":
			if bv.kind == jsonBool && bv.b {
				m.set(k, bv)
			}
		case "enum":
			if av.kind != jsonArray || bv.kind != jsonArray {
				continue
			}
			inter := &jsonValue{kind: jsonArray}
			for _, x := range av.arr {
				for _, y := range bv.arr {
					if jsonEqual(x, y) {
						inter.arr = append(inter.arr, x)
						break
					}
				}
			}
			if len(inter.arr) == 0 {
				return nil, false
			}
			m.set(k, inter)
		case "const":
			if !jsonEqual(av, bv) {
				return nil, false
			}
		case "unevaluatedProperties", "unevaluatedItems":
			// below
		case "items", "additionalItems", "propertyNames", "contains", "not":
			if av.kind == jsonArray || bv.kind == jsonArray {
				if canonicalJSON(av) != canonicalJSON(bv) {
					c.relaxf(ptr, k, "allOf: two array forms of %s could not be merged; the first is enforced", k)
				}
				continue
			}
			if k == "not" || k == "contains" {
				if canonicalJSON(av) != canonicalJSON(bv) {
					c.relaxf(ptr, k, "allOf: two %s schemas could not be merged; the first is enforced", k)
				}
				continue
			}
			m.set(k, c.allOfOf(av, bv))
		case "prefixItems":
			// below, with each side's items
		default:
			if info, ok := keywords[k]; (ok && info.class == kwAnnotation) || strings.HasPrefix(k, "x-") {
				continue
			}
			if canonicalJSON(av) != canonicalJSON(bv) {
				c.relaxf(ptr, k, "allOf: two different values of %s could not be merged; the first is enforced", k)
			}
		}
	}
	if pi := c.mergePrefixItems(a, b); pi != nil {
		m.set("prefixItems", pi)
	}
	if mergedProps != nil {
		m.set("properties", mergedProps)
	}
	apA, apB := a.get("additionalProperties"), closingOf(b)
	switch {
	case apA != nil && apB != nil:
		m.set("additionalProperties", c.allOfOf(apA, apB))
	case apB != nil:
		m.set("additionalProperties", apB)
	}
	// a is the accumulated schema whose unevaluatedProperties sees what every
	// merged subschema evaluates: a subschema that closes itself (its own
	// additionalProperties or unevaluatedProperties) evaluates every name.
	if closingOf(b) != nil {
		m.del("unevaluatedProperties")
	} else if m.has("unevaluatedProperties") && b.has("patternProperties") {
		c.relaxf(ptr, "unevaluatedProperties", "names evaluated by patternProperties of a subschema are not tracked; unevaluatedProperties is not enforced")
		m.del("unevaluatedProperties")
	}
	if ua, ub := a.get("unevaluatedItems"), b.get("unevaluatedItems"); ub != nil || (ua != nil && (b.has("items") || b.has("prefixItems") || b.has("contains"))) {
		if ua != nil || a.has("items") || a.has("prefixItems") {
			c.relaxf(ptr, "unevaluatedItems", "unevaluatedItems across subschemas is not enforced")
			m.del("unevaluatedItems")
		} else {
			m.set("unevaluatedItems", ub)
		}
	}
	return m, true
}

// mergePrefixItems returns the prefixItems of allOf(a, b), or nil when
// neither declares one. A position takes what each side applies there: its
// prefixItems schema, else its items (which cover every position past its
// own prefix), so {"items": {"minimum": 5}} beside {"prefixItems":
// [{"minimum": 3}]} still applies minimum 5 at index 0. Draft-07 tuple
// forms (items as an array) are left to the keyword loop.
func (c *compiler) mergePrefixItems(a, b *jsonValue) *jsonValue {
	pa, pb := a.get("prefixItems"), b.get("prefixItems")
	if (pa == nil || pa.kind != jsonArray) && (pb == nil || pb.kind != jsonArray) {
		return nil
	}
	ia, ib := a.get("items"), b.get("items")
	if (ia != nil && ia.kind == jsonArray) || (ib != nil && ib.kind == jsonArray) {
		return nil
	}
	at := func(p, items *jsonValue, j int) *jsonValue {
		if p != nil && p.kind == jsonArray && j < len(p.arr) {
			return p.arr[j]
		}
		return items
	}
	n := 0
	for _, p := range []*jsonValue{pa, pb} {
		if p != nil && p.kind == jsonArray {
			n = max(n, len(p.arr))
		}
	}
	pi := &jsonValue{kind: jsonArray}
	for j := range n {
		x, y := at(pa, ia, j), at(pb, ib, j)
		switch {
		case x == nil:
			pi.arr = append(pi.arr, y)
		case y == nil:
			pi.arr = append(pi.arr, x)
		default:
			pi.arr = append(pi.arr, c.allOfOf(x, y))
		}
	}
	return pi
}

// closingOf returns the schema a flat subschema applies to names it does
// not declare: additionalProperties, else unevaluatedProperties (the same
// thing for a subschema without applicators of its own).
func closingOf(s *jsonValue) *jsonValue {
	if ap := s.get("additionalProperties"); ap != nil {
		return ap
	}
	return s.get("unevaluatedProperties")
}

// mergeProps unions the properties of a and b; a property both declare
// must satisfy both, and a property one side does not declare must satisfy
// that side's additionalProperties.
func (c *compiler) mergeProps(a, b *jsonValue) *jsonValue {
	pa, pb := a.get("properties"), b.get("properties")
	apA := a.get("additionalProperties")
	if pa == nil && pb == nil {
		return nil
	}
	out := newObject()
	placed := map[string]bool{}
	index := func(props *jsonValue) map[string]*jsonValue {
		m := map[string]*jsonValue{}
		if props != nil && props.kind == jsonObject {
			for i, k := range props.keys {
				m[k] = props.vals[i]
			}
		}
		return m
	}
	add := func(props *jsonValue, other *jsonValue, otherProps, otherAP *jsonValue) {
		if props == nil || props.kind != jsonObject {
			return
		}
		op := index(otherProps)
		for i, k := range props.keys {
			if placed[k] {
				continue
			}
			placed[k] = true
			v := props.vals[i]
			if ov, ok := op[k]; ok {
				v = c.allOfOf(v, ov)
			} else if otherAP != nil && !c.matchesAnyPattern(other, k) {
				v = c.allOfOf(v, otherAP)
			}
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, v)
		}
	}
	add(pa, b, pb, closingOf(b))
	add(pb, a, pa, apA)
	return out
}

// matchesAnyPattern reports whether name matches one of s's
// patternProperties. An undecided pattern counts as matching, so that the
// caller does not apply additionalProperties to the name (the weaker
// choice, reported as a relaxation by nameMatches).
func (c *compiler) matchesAnyPattern(s *jsonValue, name string) bool {
	pp := s.get("patternProperties")
	if pp == nil || pp.kind != jsonObject {
		return false
	}
	for _, pat := range pp.keys {
		if ok, known := c.nameMatches(pat, name, pointerJoin(c.ptrOf(s, ""), "patternProperties", pat), "patternProperties"); ok || !known {
			return true
		}
	}
	return false
}

func numLess(a, b *jsonValue) bool {
	if a.kind != jsonNumber || b.kind != jsonNumber {
		return false
	}
	ra, ok1 := numberRat(a.s)
	rb, ok2 := numberRat(b.s)
	return ok1 && ok2 && ra.Cmp(rb) < 0
}

// dependencies expands dependentRequired, dependentSchemas and draft-07
// dependencies into unions and removes them from base: "if a is present,
// so are b and c" is "a absent, or a, b and c present"; "if a is present,
// S holds" is "a absent, or a present and S". The expansion is exact.
func (c *compiler) dependencies(base *jsonValue, ptr string) [][]*jsonValue {
	var parts [][]*jsonValue
	absent := func(name string) *jsonValue {
		v, props := newObject(), newObject()
		props.set(name, newBool(false))
		v.set("properties", props)
		return v
	}
	present := func(names ...*jsonValue) *jsonValue {
		v := newObject()
		v.set("required", &jsonValue{kind: jsonArray, arr: names})
		return v
	}
	for _, kw := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		deps := base.get(kw)
		if deps == nil || deps.kind != jsonObject {
			continue
		}
		base.del(kw)
		for i, name := range deps.keys {
			d := deps.vals[i]
			switch {
			case d.kind == jsonArray:
				names := []*jsonValue{newString(name)}
				for _, x := range d.arr {
					if x.kind == jsonString {
						names = append(names, x)
					}
				}
				parts = append(parts, []*jsonValue{absent(name), present(names...)})
			case d.kind == jsonObject || d.kind == jsonBool:
				union := []*jsonValue{absent(name)}
				for _, x := range c.flatten(d, pointerJoin(ptr, kw, name)) {
					if m, ok := c.merge(present(newString(name)), x, ptr); ok {
						union = append(union, m)
					}
				}
				parts = append(parts, union)
			}
		}
	}
	return parts
}

// maxExclusiveVariants bounds the expansion of exclusiveRequired.
const maxExclusiveVariants = 64

// exclusiveRequired compiles the common oneOf whose branches only list
// required properties ("radius", or "length" and "width"): exactly one
// branch holds when the instance has all of its names and, for every other
// branch, lacks at least one name the first does not require. Each variant
// forbids one such name per other branch. ok is false for other oneOfs.
func (c *compiler) exclusiveRequired(br *jsonValue) ([]*jsonValue, bool) {
	if len(br.arr) < 2 {
		return nil, false
	}
	sets := make([][]string, len(br.arr))
	for i, b := range br.arr {
		if b.kind != jsonObject || !b.has("required") || !isAnnotationOnly(b, "required") {
			return nil, false
		}
		r := b.get("required")
		if r.kind != jsonArray {
			return nil, false
		}
		for _, x := range r.arr {
			if x.kind != jsonString {
				return nil, false
			}
			sets[i] = append(sets[i], x.s)
		}
	}
	var out []*jsonValue
	for i := range sets {
		in := map[string]bool{}
		for _, n := range sets[i] {
			in[n] = true
		}
		// choices[j]: names of branch j that branch i does not require.
		var choices [][]string
		possible := true
		total := 1
		for j := range sets {
			if j == i {
				continue
			}
			var diff []string
			for _, n := range sets[j] {
				if !in[n] {
					diff = append(diff, n)
				}
			}
			if len(diff) == 0 {
				possible = false // every instance of branch i also satisfies branch j
				break
			}
			choices = append(choices, diff)
			total *= len(diff)
			if total > maxExclusiveVariants {
				return nil, false
			}
		}
		if !possible {
			continue
		}
		var expand func(k int, forbid []string)
		expand = func(k int, forbid []string) {
			if k == len(choices) {
				v := newObject()
				v.set("required", br.arr[i].get("required"))
				props := newObject()
				for _, n := range forbid {
					props.set(n, newBool(false))
				}
				if len(props.keys) > 0 {
					v.set("properties", props)
				}
				out = append(out, v)
				return
			}
			for _, n := range choices[k] {
				expand(k+1, append(forbid[:len(forbid):len(forbid)], n))
			}
		}
		expand(0, nil)
	}
	return out, true
}

// checkOneOf reports oneOf's exclusivity as a relaxation unless the
// branches are disjoint by type or by const/enum values.
func (c *compiler) checkOneOf(s, br *jsonValue, ptr string) {
	if len(br.arr) < 2 {
		return
	}
	var seenTypes typeSet
	disjoint := true
	for _, b := range br.arr {
		t := c.quickTypes(b)
		if t&seenTypes != 0 {
			disjoint = false
			break
		}
		seenTypes |= t
	}
	if !disjoint && c.constDisjoint(br.arr) {
		disjoint = true
	}
	if !disjoint {
		c.relaxf(ptr, "oneOf", "exactly-one is checked as at-least-one (anyOf); the gateway checks exclusivity")
	}
}

// quickTypes is the type set a schema admits, looking through $ref.
func (c *compiler) quickTypes(s *jsonValue) typeSet {
	for i := 0; i < 8 && s.kind == jsonObject; i++ {
		if r := s.get("$ref"); r != nil && r.kind == jsonString && isAnnotationOnly(s, "$ref") {
			t, ok := c.resolve(s, r.s)
			if !ok {
				return tAll
			}
			s = t
			continue
		}
		break
	}
	if s.kind == jsonBool {
		if s.b {
			return tAll
		}
		return 0
	}
	t := schemaTypes(s)
	if cv := s.get("const"); cv != nil {
		t &= typeOf(cv)
	}
	return t
}

// constDisjoint: every branch pins a property (or itself) to distinct consts.
func (c *compiler) constDisjoint(branches []*jsonValue) bool {
	var vals []*jsonValue
	for _, b := range branches {
		if b.kind != jsonObject {
			return false
		}
		if cv := b.get("const"); cv != nil {
			vals = append(vals, cv)
			continue
		}
		return false
	}
	for i := range vals {
		for j := i + 1; j < len(vals); j++ {
			if jsonEqual(vals[i], vals[j]) {
				return false
			}
		}
	}
	return true
}
