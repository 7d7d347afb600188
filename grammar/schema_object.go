package grammar

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/internal/charclass"
)

// Objects and arrays.

// arrayNode compiles the array keywords of a flat schema.
func (c *compiler) arrayNode(s *jsonValue, ptr string) *gnode {
	ws := c.p.ws
	var prefix []*gnode
	var prefixSchemas []*jsonValue
	var rest *gnode
	restPtr := pointerJoin(ptr, "items")
	itemsV := s.get("items")
	prefixKw := "prefixItems"
	pv := s.get("prefixItems")
	if itemsV != nil && itemsV.kind == jsonArray { // draft-07 tuple form
		pv, prefixKw = itemsV, "items"
		itemsV = s.get("additionalItems")
		restPtr = pointerJoin(ptr, "additionalItems")
	}
	if pv != nil && pv.kind == jsonArray {
		prefixSchemas = pv.arr
	}
	if ui := s.get("unevaluatedItems"); itemsV == nil && ui != nil {
		if k := dynamicEvaluation(s); k != "" {
			c.relaxf(ptr, "unevaluatedItems", "items evaluated through %s are not tracked; unevaluatedItems is not enforced", k)
		} else {
			itemsV = ui
			restPtr = pointerJoin(ptr, "unevaluatedItems")
		}
	}
	minI, maxI := intKeyword(s, "minItems"), intKeyword(s, "maxItems")
	if minI < 0 {
		minI = 0
	}
	if itemsV != nil {
		rest = c.share(c.value(itemsV, restPtr), "item")
	} else {
		rest = ref(c.p.value)
	}
	for i, ps := range prefixSchemas {
		n := c.value(ps, pointerJoin(ptr, prefixKw, strconv.Itoa(i)))
		if n.op == gNone {
			if maxI < 0 || maxI > i {
				maxI = i
			}
			break
		}
		prefix = append(prefix, n)
	}
	if rest.op == gNone && (maxI < 0 || maxI > len(prefix)) {
		maxI = len(prefix)
	}
	if maxI >= 0 && minI > maxI {
		return nNone
	}
	if maxI < 0 && rest.op != gNone && c.opts.MaxItems > 0 {
		maxI = max(c.opts.MaxItems, minI, len(prefix))
		c.bound(ptr, "maxItems", maxI)
	}
	if u := s.get("uniqueItems"); u != nil && u.kind == jsonBool && u.b && (maxI < 0 || maxI > 1) {
		c.relaxf(ptr, "uniqueItems", "uniqueness of items is not expressible in the grammar; the gateway checks it")
	}
	if maxI > gbnf.MaxRepetition {
		c.relaxf(ptr, "maxItems", "maxItems %d is above the grammar's repetition limit %d; not enforced", maxI, gbnf.MaxRepetition)
		maxI = -1
	}
	if minI > gbnf.MaxRepetition {
		c.relaxf(ptr, "minItems", "minItems %d is above the grammar's repetition limit %d; %d is enforced", minI, gbnf.MaxRepetition, gbnf.MaxRepetition)
		minI = gbnf.MaxRepetition
	}
	sep := func(n *gnode) *gnode { return seq(ws, lit(","), ws, n) }
	// tail(k): the elements after the first k, k >= 1.
	var tail func(k int) *gnode
	tail = func(k int) *gnode {
		if maxI >= 0 && k >= maxI {
			return nEmpty
		}
		if k >= len(prefix) {
			lo := minI - k
			if lo < 0 {
				lo = 0
			}
			hi := -1
			if maxI >= 0 {
				hi = maxI - k
			}
			return rep(sep(rest), lo, hi)
		}
		next := seq(sep(prefix[k]), tail(k+1))
		if k < minI {
			return next
		}
		return opt(next)
	}
	first := rest
	if len(prefix) > 0 {
		first = prefix[0]
	}
	var elems *gnode
	if maxI == 0 {
		elems = nNone
	} else {
		elems = seq(first, tail(1))
	}
	nonEmpty := seq(lit("["), ws, elems, ws, lit("]"))
	if minI == 0 {
		return alt(seq(lit("["), ws, lit("]")), nonEmpty)
	}
	return nonEmpty
}

// dynamicEvaluation names a keyword of s through which properties or items
// may be evaluated in a way the compiler does not track ("" if none).
func dynamicEvaluation(s *jsonValue) string {
	for _, k := range []string{"if", "then", "else", "dependentSchemas", "$dynamicRef", "contains", "not", "\x00ref"} {
		if s.has(k) {
			return k
		}
	}
	return ""
}

type oprop struct {
	name     string
	schema   *jsonValue
	ptr      string
	required bool
}

// noteClosed records, the first time, why an object schema admits no
// value when the reason is the grammar's own rule, not the schema's: ap
// (additionalProperties or unevaluatedProperties) is absent and objects
// are not open, so undeclared properties were closed by the grammar.
func (c *compiler) noteClosed(ap *jsonValue, format string, args ...any) {
	if ap == nil && !c.opts.OpenObjects && c.closed == "" {
		c.closed = fmt.Sprintf(format, args...)
	}
}

// objectNode compiles the object keywords of a flat schema. Properties
// appear in declaration order, each optional one present or absent;
// undeclared properties follow them when the schema admits any.
func (c *compiler) objectNode(s *jsonValue, ptr string) *gnode {
	ws := c.p.ws
	req := map[string]bool{}
	var reqOrder []string
	if rv := s.get("required"); rv != nil && rv.kind == jsonArray {
		for _, r := range rv.arr {
			if r.kind == jsonString && !req[r.s] {
				req[r.s] = true
				reqOrder = append(reqOrder, r.s)
			}
		}
	}
	ap := s.get("additionalProperties")
	apKw := "additionalProperties"
	if ap == nil {
		if up := s.get("unevaluatedProperties"); up != nil {
			if k := dynamicEvaluation(s); k != "" {
				c.relaxf(ptr, "unevaluatedProperties", "names evaluated through %s are not tracked; undeclared properties are admitted", k)
				ap = newBool(true)
			} else {
				ap, apKw = up, "unevaluatedProperties"
			}
		}
	}
	extras := c.opts.OpenObjects
	if ap != nil {
		extras = !(ap.kind == jsonBool && !ap.b)
	}
	pp := s.get("patternProperties")
	if pp != nil && pp.kind != jsonObject {
		pp = nil
	}
	pv := s.get("properties")
	props := make([]oprop, 0, len(pv.keysOrNil())+len(reqOrder))
	declared := map[string]bool{}
	if pv != nil && pv.kind == jsonObject {
		for i, k := range pv.keys {
			if declared[k] {
				continue
			}
			declared[k] = true
			props = append(props, oprop{k, pv.vals[i], pointerJoin(ptr, "properties", k), req[k]})
		}
	}
	for _, r := range reqOrder {
		if declared[r] {
			continue
		}
		declared[r] = true
		var sch *jsonValue
		undecided := false
		for i, pat := range pp.keysOrNil() {
			ok, known := c.nameMatches(pat, r, pointerJoin(ptr, "patternProperties", pat), "patternProperties")
			undecided = undecided || !known
			if ok {
				if sch == nil {
					sch = pp.vals[i]
				} else {
					sch = c.allOfOf(sch, pp.vals[i])
				}
			}
		}
		if sch == nil && undecided {
			// The name may match the undecided pattern: any value (reported).
			sch = newBool(true)
		}
		if sch == nil {
			if !extras {
				c.noteClosed(ap, "#%s requires %q, which it does not declare", ptr, r)
				return nNone
			}
			sch = newBool(true)
			if ap != nil {
				sch = ap
			}
		}
		props = append(props, oprop{r, sch, pointerJoin(ptr, "required"), true})
	}
	// patternProperties also constrain declared properties whose names match.
	for i := range props {
		for j, pat := range pp.keysOrNil() {
			if ok, _ := c.nameMatches(pat, props[i].name, pointerJoin(ptr, "patternProperties", pat), "patternProperties"); ok {
				props[i].schema = c.allOfOf(props[i].schema, pp.vals[j])
			}
		}
	}
	if pn := s.get("propertyNames"); pn != nil {
		kept := props[:0]
		for _, p := range props {
			if c.admits(pn, newString(p.name), 0) {
				kept = append(kept, p)
			} else if p.required {
				return nNone
			}
		}
		props = kept
		if extras || pp != nil {
			c.relaxf(ptr, "propertyNames", "names of undeclared properties are not checked against propertyNames")
		}
	}
	kvs := make([]*gnode, 0, len(props))
	kept := make([]oprop, 0, len(props))
	allNames := make([]string, 0, len(props)) // declared names, including those that can never appear
	for _, p := range props {
		allNames = append(allNames, p.name)
	}
	for _, p := range props {
		v := c.value(p.schema, p.ptr)
		if v.op == gNone {
			if p.required {
				return nNone
			}
			continue
		}
		v = c.share(v, p.name)
		var kb strings.Builder
		writeJSONString(&kb, p.name)
		kvs = append(kvs, seq(lit(kb.String()), ws, lit(":"), ws, v))
		kept = append(kept, p)
	}
	props = kept
	// Undeclared properties.
	var xs []*gnode
	if pp != nil {
		if len(pp.keys) > 1 {
			c.relaxf(ptr, "patternProperties", "a name matching several patterns must satisfy all their schemas; each pattern is checked alone")
		}
		for i, pat := range pp.keys {
			kc, _, _, _ := c.patternContent(pat, pointerJoin(ptr, "patternProperties"))
			if kc == nil {
				kc = star(ref(c.p.jsonChar))
			}
			v := c.value(pp.vals[i], pointerJoin(ptr, "patternProperties", pat))
			if v.op != gNone {
				xs = append(xs, seq(lit(`"`), kc, lit(`"`), ws, lit(":"), ws, v))
				// The branch's names are not told from the declared ones.
				for _, name := range allNames {
					if ok, _ := c.nameMatches(pat, name, pointerJoin(ptr, "patternProperties", pat), "patternProperties"); ok {
						c.relaxf(ptr, "patternProperties", "the declared property %q matches the pattern %q too: written among the undeclared members, it takes the pattern's schema alone", name, pat)
						break
					}
				}
			}
		}
	}
	if extras {
		var v *gnode
		if ap != nil {
			v = c.value(ap, pointerJoin(ptr, apKw))
		} else {
			v = ref(c.p.value)
		}
		if pp != nil && v.op != gNone && !(ap != nil && ap.kind == jsonBool) {
			c.relaxf(ptr, "patternProperties", "an undeclared name that matches a pattern may take the %s schema instead", apKw)
		} else if pp != nil && v.op != gNone {
			c.relaxf(ptr, "patternProperties", "an undeclared name that matches a pattern is not forced to its schema")
		}
		if v.op != gNone {
			xs = append(xs, seq(c.keyNotIn(allNames), ws, lit(":"), ws, v))
		}
	}
	extra := alt(xs...)
	if extra.op == gAlt {
		extra = ref(&grule{hint: "extra-kv", body: extra})
	}
	hasExtra := extra.op != gNone
	nReq := 0
	for _, p := range props {
		if p.required {
			nReq++
		}
	}
	if minP := intKeyword(s, "minProperties"); minP > nReq && minP > 1 {
		if !hasExtra && minP > len(props) {
			c.noteClosed(ap, "#%s has minProperties %d and declares %d properties", ptr, minP, len(props))
			return nNone
		}
		c.relaxf(ptr, "minProperties", "minProperties %d is not enforced beyond the required properties", minP)
	}
	emptyOK := nReq == 0 && intKeyword(s, "minProperties") <= 0
	if maxP := intKeyword(s, "maxProperties"); maxP >= 0 {
		switch {
		case maxP < nReq:
			return nNone
		case maxP == 0:
			props, kvs, hasExtra = nil, nil, false
		case !hasExtra && maxP >= len(props):
		default:
			c.relaxf(ptr, "maxProperties", "maxProperties %d is not enforced", maxP)
		}
	}
	// after(i): the members after a first present one, each preceded by a
	// comma; rules are made only where a suffix is shared.
	n := len(props)
	firstReq := n
	for i, p := range props {
		if p.required {
			firstReq = i
			break
		}
	}
	extraTail := nEmpty
	if hasExtra {
		extraTail = star(seq(ws, lit(","), ws, extra))
	}
	after := make([]*gnode, n+1)
	after[n] = extraTail
	for i := n - 1; i >= 0; i-- {
		item := seq(ws, lit(","), ws, kvs[i])
		if !props[i].required {
			item = opt(item)
		}
		body := seq(item, after[i+1])
		if i <= firstReq+1 && i > 0 && body.op != gEmpty && i < n {
			after[i] = ref(&grule{hint: "after-" + props[i].name, body: body})
		} else {
			after[i] = body
		}
	}
	// first(i): a non-empty member list whose first member is property i or later.
	var firsts []*gnode
	for i := 0; i < n; i++ {
		firsts = append(firsts, seq(kvs[i], after[i+1]))
		if props[i].required {
			break
		}
	}
	if firstReq == n && hasExtra {
		firsts = append(firsts, seq(extra, extraTail))
	}
	members := alt(firsts...)
	var alts []*gnode
	if emptyOK {
		alts = append(alts, seq(lit("{"), ws, lit("}")))
	}
	if members.op != gNone {
		alts = append(alts, seq(lit("{"), ws, members, ws, lit("}")))
	}
	if len(alts) == 0 && !hasExtra {
		// minProperties asks for members, and none is declared.
		c.noteClosed(ap, "#%s has minProperties %d and declares %d properties", ptr, intKeyword(s, "minProperties"), len(props))
	}
	return alt(alts...)
}

func (v *jsonValue) keysOrNil() []string {
	if v == nil {
		return nil
	}
	return v.keys
}

// keyNotIn returns a node for a property name (quotes included) written in
// canonical form that is none of names.
func (c *compiler) keyNotIn(names []string) *gnode {
	rest := ref(keyRestRule)
	if len(names) == 0 {
		return seq(lit(`"`), rest)
	}
	type trie struct {
		kids     map[rune]*trie
		order    []rune
		terminal bool
	}
	root := &trie{kids: map[rune]*trie{}}
	for _, name := range names {
		t := root
		for _, r := range name {
			k, ok := t.kids[r]
			if !ok {
				k = &trie{kids: map[rune]*trie{}}
				t.kids[r] = k
				t.order = append(t.order, r)
			}
			t = k
		}
		t.terminal = true
	}
	var build func(t *trie) *gnode
	build = func(t *trie) *gnode {
		var alts []*gnode
		if !t.terminal {
			alts = append(alts, lit(`"`))
		}
		var kidRanges []crange
		special := false
		for _, r := range t.order {
			var b strings.Builder
			writeJSONString(&b, string(r))
			unit := b.String()
			alts = append(alts, seq(lit(unit[1:len(unit)-1]), build(t.kids[r])))
			kidRanges = append(kidRanges, crange{Lo: r, Hi: r})
			if r < 0x20 || r == '"' || r == '\\' {
				special = true
			}
		}
		other := intersectRanges(rawChars, charclass.Complement(kidRanges))
		alts = append(alts, seq(class(other...), rest))
		if !special {
			alts = append(alts, seq(ref(keyEscapeRule), rest))
		} else {
			for _, cp := range append([]rune{'"', '\\'}, ctrlRunes()...) {
				if _, isKid := t.kids[cp]; isKid {
					continue
				}
				var b strings.Builder
				writeJSONString(&b, string(cp))
				e := b.String()
				alts = append(alts, seq(lit(e[1:len(e)-1]), rest))
			}
		}
		return alt(alts...)
	}
	return seq(lit(`"`), build(root))
}

func ctrlRunes() []rune {
	rs := make([]rune, 0x20)
	for i := range rs {
		rs[i] = rune(i)
	}
	return rs
}

var keyEscapeRule = &grule{hint: "key-escape", body: seq(lit(`\`), ctrlEscapeBody())}

var keyRestRule = &grule{hint: "key-rest", body: seq(star(ref(keyCharRule)), lit(`"`))}
