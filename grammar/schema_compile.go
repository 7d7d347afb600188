package grammar

import (
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// typeSet is a set of JSON Schema types; tInt is the integral numbers,
// tNum the non-integral ones ("number" is both).
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBool
	tInt
	tNum
	tStr
	tArr
	tObj
	tAll = tNull | tBool | tInt | tNum | tStr | tArr | tObj
)

var typeBits = map[string]typeSet{"null": tNull, "boolean": tBool, "integer": tInt, "number": tInt | tNum,
	"string": tStr, "array": tArr, "object": tObj}

// typeOf returns the type set of a JSON value.
func typeOf(v *jsonValue) typeSet {
	switch v.kind {
	case jsonNull:
		return tNull
	case jsonBool:
		return tBool
	case jsonNumber:
		if r, ok := numberRat(v.s); ok && r.IsInt() {
			return tInt
		}
		return tNum
	case jsonString:
		return tStr
	case jsonArray:
		return tArr
	}
	return tObj
}

// keyword classes: which instance types a keyword applies to, and how the
// compiler treats it.
type kwClass uint8

const (
	kwAnnotation kwClass = iota // no effect on validity
	kwHandled                   // compiled (the handler reports partial cases itself)
	kwRelaxed                   // validity constraint a grammar does not express
)

type kwInfo struct {
	class kwClass
	types typeSet
}

var keywords = map[string]kwInfo{
	"$schema": {kwAnnotation, tAll}, "$id": {kwAnnotation, tAll}, "id": {kwAnnotation, tAll},
	"$anchor": {kwAnnotation, tAll}, "$dynamicAnchor": {kwAnnotation, tAll}, "$comment": {kwAnnotation, tAll},
	"$defs": {kwAnnotation, tAll}, "definitions": {kwAnnotation, tAll}, "$vocabulary": {kwAnnotation, tAll},
	"title": {kwAnnotation, tAll}, "description": {kwAnnotation, tAll}, "default": {kwAnnotation, tAll},
	"examples": {kwAnnotation, tAll}, "example": {kwAnnotation, tAll}, "deprecated": {kwAnnotation, tAll},
	"readOnly": {kwAnnotation, tAll}, "writeOnly": {kwAnnotation, tAll}, "contentEncoding": {kwAnnotation, tAll},
	"contentMediaType": {kwAnnotation, tAll}, "contentSchema": {kwAnnotation, tAll}, "discriminator": {kwAnnotation, tAll},
	"externalDocs": {kwAnnotation, tAll}, "xml": {kwAnnotation, tAll},

	"type": {kwHandled, tAll}, "enum": {kwHandled, tAll}, "const": {kwHandled, tAll}, "nullable": {kwHandled, tAll},
	"$ref": {kwHandled, tAll}, "allOf": {kwHandled, tAll}, "anyOf": {kwHandled, tAll}, "oneOf": {kwHandled, tAll},
	"not": {kwHandled, tAll},

	"minLength": {kwHandled, tStr}, "maxLength": {kwHandled, tStr}, "pattern": {kwHandled, tStr}, "format": {kwHandled, tStr},

	"minimum": {kwHandled, tInt | tNum}, "maximum": {kwHandled, tInt | tNum}, "exclusiveMinimum": {kwHandled, tInt | tNum},
	"exclusiveMaximum": {kwHandled, tInt | tNum}, "multipleOf": {kwHandled, tInt | tNum},

	"items": {kwHandled, tArr}, "prefixItems": {kwHandled, tArr}, "additionalItems": {kwHandled, tArr},
	"minItems": {kwHandled, tArr}, "maxItems": {kwHandled, tArr}, "uniqueItems": {kwHandled, tArr},
	"contains": {kwRelaxed, tArr}, "minContains": {kwRelaxed, tArr}, "maxContains": {kwRelaxed, tArr},
	"unevaluatedItems": {kwHandled, tArr},

	"properties": {kwHandled, tObj}, "required": {kwHandled, tObj}, "additionalProperties": {kwHandled, tObj},
	"patternProperties": {kwHandled, tObj}, "propertyNames": {kwHandled, tObj}, "minProperties": {kwHandled, tObj},
	"maxProperties": {kwHandled, tObj}, "unevaluatedProperties": {kwHandled, tObj},
	"dependentRequired": {kwRelaxed, tObj}, "dependentSchemas": {kwRelaxed, tObj}, "dependencies": {kwRelaxed, tObj},

	"if": {kwRelaxed, tAll}, "then": {kwAnnotation, tAll}, "else": {kwAnnotation, tAll},
	"$dynamicRef": {kwRelaxed, tAll}, "$recursiveRef": {kwRelaxed, tAll}, "$recursiveAnchor": {kwAnnotation, tAll},
}

// Limits that keep compilation bounded on adversarial schemas.
const (
	maxSchemaDepth = 128
	maxBranches    = 256
	maxSteps       = 20000 // schema nodes compiled plus merges
)

// compiler turns one schema document into grammar rules. It is used by one
// goroutine for one compilation.
type compiler struct {
	opts  Options
	p     *prims
	doc   *jsonValue
	relax []Relaxation
	seen  map[Relaxation]bool

	ptrs       map[*jsonValue]string // JSON pointer of every schema node
	bases      map[*jsonValue]string // base URI in effect at every schema node
	ids        map[string]*jsonValue // absolute URI (no fragment) → resource
	anchors    map[string]*jsonValue // absolute URI#anchor → node
	refRules   map[*jsonValue]*grule
	inline     []*jsonValue // $ref targets being merged (cycle guard)
	chars      map[string]*gnode
	shared     map[uint64][]*grule
	pairs      map[[2]*jsonValue]*jsonValue
	synthetic  map[*jsonValue]bool // made by allOfOf
	synthRules map[*jsonValue]*grule
	depth      int
	steps      int // work done, against maxSteps
	fatal      error
}

func newCompiler(doc *jsonValue, opts Options) *compiler {
	c := &compiler{opts: opts, p: spaced, doc: doc, seen: map[Relaxation]bool{},
		ptrs: map[*jsonValue]string{}, bases: map[*jsonValue]string{}, ids: map[string]*jsonValue{},
		anchors: map[string]*jsonValue{}, refRules: map[*jsonValue]*grule{}, chars: map[string]*gnode{},
		shared: map[uint64][]*grule{}, pairs: map[[2]*jsonValue]*jsonValue{}, synthetic: map[*jsonValue]bool{},
		synthRules: map[*jsonValue]*grule{}}
	if opts.Compact {
		c.p = compact
	}
	c.index(doc, "", "", 0)
	return c
}

// step counts work and reports whether the budget is spent; the first
// time it is, the compilation fails with ErrUnsupported.
func (c *compiler) step(ptr string) bool {
	c.steps++
	if c.steps > maxSteps {
		if c.fatal == nil {
			c.fatal = &SchemaError{Pointer: ptr, Msg: fmt.Sprintf("the schema expands to more than %d subschemas (recursive allOf/$ref merges); not compiled", maxSteps), Err: ErrUnsupported}
		}
		return true
	}
	return false
}

// share returns a reference to a rule for a composite node, so that a node
// used in several places is printed once; equal nodes share one rule.
func (c *compiler) share(n *gnode, hint string) *gnode {
	switch n.op {
	case gSeq, gAlt, gRep:
	default:
		return n
	}
	for _, r := range c.shared[n.h] {
		if equalNodes(r.body, n) {
			if r.hint != hint {
				r.hint = shapeName(n) // shared by several places: name it by shape
			}
			return ref(r)
		}
	}
	r := &grule{hint: hint, body: n}
	c.shared[n.h] = append(c.shared[n.h], r)
	return ref(r)
}

// shapeName names a rule by the JSON it matches.
func shapeName(n *gnode) string {
	for n.op == gSeq || n.op == gAlt {
		n = n.subs[0]
	}
	if n.op == gLit && n.lit != "" {
		switch n.lit[0] {
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		}
	}
	return "value"
}

// relaxf records a constraint the grammar does not enforce.
func (c *compiler) relaxf(ptr, keyword, format string, args ...any) {
	r := Relaxation{Pointer: ptr, Keyword: keyword, Reason: fmt.Sprintf(format, args...)}
	if !c.seen[r] {
		c.seen[r] = true
		c.relax = append(c.relax, r)
	}
}

func pointerJoin(ptr string, parts ...string) string {
	var b strings.Builder
	b.WriteString(ptr)
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// index records pointers, base URIs, $id resources and anchors.
func (c *compiler) index(v *jsonValue, ptr, base string, depth int) {
	if depth > maxJSONDepth {
		return
	}
	switch v.kind {
	case jsonArray:
		for i, e := range v.arr {
			c.index(e, pointerJoin(ptr, strconv.Itoa(i)), base, depth+1)
		}
		return
	case jsonObject:
	default:
		return
	}
	if _, ok := c.ptrs[v]; ok {
		return
	}
	if id := v.get("$id"); id != nil && id.kind == jsonString {
		if u := resolveURI(base, id.s); u != "" {
			base = strings.TrimSuffix(u, "#")
			if i := strings.IndexByte(base, '#'); i >= 0 { // draft-07 "$id": "#foo" is an anchor
				c.anchors[base] = v
				base = base[:i]
			} else {
				c.ids[base] = v
			}
		}
	}
	c.ptrs[v] = ptr
	c.bases[v] = base
	if base == "" {
		c.ids[""] = c.doc
	}
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a := v.get(k); a != nil && a.kind == jsonString {
			c.anchors[base+"#"+a.s] = v
		}
	}
	for i, k := range v.keys {
		switch k {
		case "enum", "const", "default", "examples", "example":
			continue
		}
		c.index(v.vals[i], pointerJoin(ptr, k), base, depth+1)
	}
}

func resolveURI(base, ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base == "" {
		return r.String()
	}
	b, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return b.ResolveReference(r).String()
}

// resolve finds the schema a $ref names, relative to the node holding it.
func (c *compiler) resolve(at *jsonValue, ref string) (*jsonValue, bool) {
	full := resolveURI(c.bases[at], ref)
	if full == "" && ref != "" && ref != "#" {
		full = ref
	}
	docURI, frag := full, ""
	if i := strings.IndexByte(full, '#'); i >= 0 {
		docURI, frag = full[:i], full[i+1:]
	}
	res, ok := c.ids[docURI]
	if !ok {
		if docURI != "" && docURI == c.bases[c.doc] {
			res = c.doc
		} else {
			return nil, false
		}
	}
	if frag == "" {
		return res, true
	}
	if !strings.HasPrefix(frag, "/") {
		n, ok := c.anchors[docURI+"#"+frag]
		return n, ok
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	cur := res
	for _, part := range strings.Split(frag[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch cur.kind {
		case jsonObject:
			cur = cur.get(part)
		case jsonArray:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(cur.arr) {
				return nil, false
			}
			cur = cur.arr[i]
		default:
			return nil, false
		}
		if cur == nil {
			return nil, false
		}
	}
	return cur, true
}

func (c *compiler) ptrOf(v *jsonValue, fallback string) string {
	if p, ok := c.ptrs[v]; ok {
		return p
	}
	return fallback
}

// compileRoot compiles the document into a root rule.
func (c *compiler) compileRoot() *grule {
	root := &grule{hint: "root"}
	root.body = c.value(c.doc, "")
	if r, ok := root.body.singleRef(); ok {
		root.body = r.body
		if r.body == nil {
			root.body = ref(r)
		}
	}
	return root
}

func (n *gnode) singleRef() (*grule, bool) {
	if n.op == gRef {
		return n.rule, true
	}
	return nil, false
}

// isAnnotationOnly reports whether every keyword of s other than skip is
// an annotation.
func isAnnotationOnly(s *jsonValue, skip ...string) bool {
	for _, k := range s.keys {
		if contains(skip, k) || strings.HasPrefix(k, "x-") {
			continue
		}
		if info, ok := keywords[k]; !ok || info.class != kwAnnotation {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// value compiles a schema into a node matching the JSON values it admits.
func (c *compiler) value(s *jsonValue, ptr string) *gnode {
	if c.step(ptr) {
		return nNone
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxSchemaDepth {
		c.relaxf(ptr, "", "schema nested deeper than %d levels; any value admitted below", maxSchemaDepth)
		return ref(c.p.value)
	}
	switch s.kind {
	case jsonBool:
		if s.b {
			return ref(c.p.value)
		}
		return nNone
	case jsonObject:
	default:
		c.relaxf(ptr, "", "a schema must be an object or a boolean; any value admitted")
		return ref(c.p.value)
	}
	if c.synthetic[s] {
		if r, ok := c.synthRules[s]; ok {
			return ref(r)
		}
		r := &grule{hint: "all"}
		c.synthRules[s] = r
		r.body = c.valueOf(s, ptr)
		if r.body.op == gNone {
			return nNone
		}
		return ref(r)
	}
	return c.valueOf(s, ptr)
}

// valueOf compiles an object schema (the part of value after the checks).
func (c *compiler) valueOf(s *jsonValue, ptr string) *gnode {
	// A bare $ref becomes a rule reference: this is what makes recursive
	// schemas finite.
	if r := s.get("$ref"); r != nil && isAnnotationOnly(s, "$ref") {
		return c.refNode(s, r, ptr)
	}
	// A bare anyOf/oneOf: one alternative per branch, each compiled on its own
	// (so branches that are $refs stay rule references).
	for _, k := range []string{"anyOf", "oneOf"} {
		if br := s.get(k); br != nil && br.kind == jsonArray && isAnnotationOnly(s, k) {
			if k == "oneOf" {
				c.checkOneOf(s, br, ptr)
			}
			alts := make([]*gnode, len(br.arr))
			for i, b := range br.arr {
				alts[i] = c.value(b, pointerJoin(ptr, k, strconv.Itoa(i)))
			}
			return alt(alts...)
		}
	}
	if al := s.get("allOf"); al != nil && al.kind == jsonArray && len(al.arr) == 1 && isAnnotationOnly(s, "allOf") {
		return c.value(al.arr[0], pointerJoin(ptr, "allOf", "0"))
	}
	branches := c.flatten(s, ptr)
	alts := make([]*gnode, 0, len(branches))
	for _, b := range branches {
		alts = append(alts, c.flat(b, ptr))
	}
	return alt(alts...)
}

func (c *compiler) refNode(s, r *jsonValue, ptr string) *gnode {
	if r.kind != jsonString {
		c.relaxf(ptr, "$ref", "$ref is not a string; any value admitted")
		return ref(c.p.value)
	}
	target, ok := c.resolve(s, r.s)
	if !ok {
		c.relaxf(ptr, "$ref", "cannot resolve %q (only references inside the schema document are followed); any value admitted", r.s)
		return ref(c.p.value)
	}
	if rule, ok := c.refRules[target]; ok {
		return ref(rule)
	}
	hint := r.s
	if i := strings.LastIndexAny(hint, "/#"); i >= 0 && i+1 < len(hint) {
		hint = hint[i+1:]
	}
	rule := &grule{hint: hint}
	c.refRules[target] = rule
	rule.body = c.value(target, c.ptrOf(target, ptr))
	if rule.body.op == gNone {
		return nNone
	}
	return ref(rule)
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
		t &= typeOf(cv) | widenInt(typeOf(cv))
	}
	return t
}

func widenInt(t typeSet) typeSet {
	if t == tInt {
		return tInt
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

// schemaTypes is the type set of a flat schema's type/nullable keywords.
func schemaTypes(s *jsonValue) typeSet {
	t := tAll
	if tv := s.get("type"); tv != nil {
		t = 0
		switch tv.kind {
		case jsonString:
			t = typeBits[tv.s]
		case jsonArray:
			for _, e := range tv.arr {
				if e.kind == jsonString {
					t |= typeBits[e.s]
				}
			}
		}
		if n := s.get("nullable"); n != nil && n.kind == jsonBool && n.b {
			t |= tNull
		}
	}
	return t
}

func typeValue(t typeSet) *jsonValue {
	arr := &jsonValue{kind: jsonArray}
	for _, name := range []string{"null", "boolean", "object", "array", "string"} {
		if t&typeBits[name] != 0 {
			arr.arr = append(arr.arr, newString(name))
		}
	}
	switch {
	case t&(tInt|tNum) == tInt|tNum:
		arr.arr = append(arr.arr, newString("number"))
	case t&tInt != 0:
		arr.arr = append(arr.arr, newString("integer"))
	case t&tNum != 0:
		// only non-integral numbers: keep "number"; integral ones are excluded below
		arr.arr = append(arr.arr, newString("number"))
	}
	return arr
}

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
		c.synthetic[n] = true
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
			if av.kind != jsonArray || bv.kind != jsonArray {
				continue
			}
			pi := &jsonValue{kind: jsonArray}
			for j := 0; j < len(av.arr) || j < len(bv.arr); j++ {
				switch {
				case j < len(av.arr) && j < len(bv.arr):
					pi.arr = append(pi.arr, c.allOfOf(av.arr[j], bv.arr[j]))
				case j < len(av.arr):
					pi.arr = append(pi.arr, av.arr[j])
				default:
					pi.arr = append(pi.arr, bv.arr[j])
				}
			}
			if len(av.arr) != len(bv.arr) {
				c.relaxf(ptr, "prefixItems", "allOf: prefixItems of different lengths merged position by position; items of the shorter one not applied to the extra positions")
			}
			m.set(k, pi)
		default:
			if info, ok := keywords[k]; (ok && info.class == kwAnnotation) || strings.HasPrefix(k, "x-") {
				continue
			}
			if canonicalJSON(av) != canonicalJSON(bv) {
				c.relaxf(ptr, k, "allOf: two different values of %s could not be merged; the first is enforced", k)
			}
		}
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
			} else if otherAP != nil && !matchesAnyPattern(other, k) {
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

func matchesAnyPattern(s *jsonValue, name string) bool {
	pp := s.get("patternProperties")
	if pp == nil || pp.kind != jsonObject {
		return false
	}
	for _, pat := range pp.keys {
		if ok, err := regexMatch(pat, name); err == nil && ok {
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

// flat compiles a schema without applicators.
func (c *compiler) flat(s *jsonValue, ptr string) *gnode {
	if r := s.get("\x00ref"); r != nil {
		return c.refNode(s.get("\x00at"), r, ptr)
	}
	types := schemaTypes(s)
	if nt := s.get("not"); nt != nil {
		types = c.applyNot(nt, types, ptr)
	}
	if types == 0 {
		return nNone
	}
	c.checkKeywords(s, types, ptr)
	if cv := s.get("const"); cv != nil {
		return c.literals(s, []*jsonValue{cv}, types, ptr)
	}
	if ev := s.get("enum"); ev != nil {
		if ev.kind != jsonArray {
			c.relaxf(ptr, "enum", "enum is not an array; ignored")
		} else {
			return c.literals(s, ev.arr, types, ptr)
		}
	}
	var alts []*gnode
	if types&tNull != 0 {
		alts = append(alts, lit("null"))
	}
	if types&tBool != 0 {
		alts = append(alts, lit("true"), lit("false"))
	}
	if types&tNum != 0 {
		alts = append(alts, c.numberNode(s, ptr, false))
	} else if types&tInt != 0 {
		alts = append(alts, c.numberNode(s, ptr, true))
	}
	if types&tStr != 0 {
		alts = append(alts, c.stringNode(s, ptr))
	}
	if types&tArr != 0 {
		alts = append(alts, c.arrayNode(s, ptr))
	}
	if types&tObj != 0 {
		alts = append(alts, c.objectNode(s, ptr))
	}
	return alt(alts...)
}

// applyNot handles `not` where it only removes types or everything.
func (c *compiler) applyNot(nt *jsonValue, types typeSet, ptr string) typeSet {
	switch {
	case nt.kind == jsonBool:
		if nt.b {
			return 0
		}
		return types
	case nt.kind == jsonObject && len(nt.keys) == 0:
		return 0
	case nt.kind == jsonObject && nt.has("type") && isAnnotationOnly(nt, "type", "nullable"):
		return types &^ schemaTypes(nt)
	}
	c.relaxf(ptr, "not", "not is only enforced when it excludes types; the gateway checks it")
	return types
}

// checkKeywords reports keywords that apply to the admitted types but are
// not compiled.
func (c *compiler) checkKeywords(s *jsonValue, types typeSet, ptr string) {
	for _, k := range s.keys {
		if strings.HasPrefix(k, "x-") || strings.HasPrefix(k, "\x00") {
			continue
		}
		info, ok := keywords[k]
		if !ok {
			c.relaxf(ptr, k, "unknown keyword; not enforced by the grammar")
			continue
		}
		if info.class != kwRelaxed || info.types&types == 0 {
			continue
		}
		switch k {
		case "if":
			c.relaxf(ptr, k, "if/then/else is not expressible in the grammar; the gateway checks it")
		case "$dynamicRef", "$recursiveRef":
			c.relaxf(ptr, k, "dynamic references are not followed; any value admitted there")
		default:
			c.relaxf(ptr, k, "not expressible in the grammar; the gateway checks it")
		}
	}
}

// literals compiles enum/const values, keeping those the sibling keywords
// admit.
func (c *compiler) literals(s *jsonValue, vals []*jsonValue, types typeSet, ptr string) *gnode {
	alts := make([]*gnode, 0, len(vals))
	for _, v := range vals {
		if typeOf(v)&types == 0 {
			continue
		}
		if !c.admits(s, v, 0) {
			continue
		}
		alts = append(alts, lit(canonicalJSON(v)))
	}
	return alt(alts...)
}

// intKeyword reads a non-negative integer keyword; -1 when absent.
func intKeyword(s *jsonValue, k string) int {
	v := s.get(k)
	if v == nil || v.kind != jsonNumber {
		return -1
	}
	r, ok := numberRat(v.s)
	if !ok || r.Sign() < 0 {
		return -1
	}
	f, _ := r.Float64()
	if f > 1<<40 {
		return 1 << 40
	}
	return int(f)
}

// bounded returns unit repeated min..max times within llama.cpp's
// repetition limit, reporting what it relaxes.
func (c *compiler) bounded(unit *gnode, min, max int, ptr, minKw, maxKw string) *gnode {
	if min > maxRepeat {
		c.relaxf(ptr, minKw, "%s %d is above the grammar's repetition limit %d; %d is enforced", minKw, min, maxRepeat, maxRepeat)
		min = maxRepeat
	}
	if max > maxRepeat {
		c.relaxf(ptr, maxKw, "%s %d is above the grammar's repetition limit %d; not enforced", maxKw, max, maxRepeat)
		max = -1
	}
	return rep(unit, min, max)
}

// stringNode compiles the string keywords of a flat schema.
func (c *compiler) stringNode(s *jsonValue, ptr string) *gnode {
	minL, maxL := intKeyword(s, "minLength"), intKeyword(s, "maxLength")
	if minL < 0 {
		minL = 0
	}
	if maxL >= 0 && maxL < minL {
		return nNone
	}
	var content *gnode
	lo, hi := 0, -1
	var single *rxNode // the pattern is one repeated character set, anchored
	if pv := s.get("pattern"); pv != nil && pv.kind == jsonString {
		content, lo, hi, single = c.patternContent(pv.s, pointerJoin(ptr))
		if fv := s.get("format"); fv != nil && content != nil {
			c.relaxf(ptr, "format", "format beside pattern: the pattern is enforced, the format is not")
		}
	} else if fv := s.get("format"); fv != nil && fv.kind == jsonString {
		content, lo, hi = c.formatContent(fv.s, ptr)
	}
	if content == nil {
		if minL == 0 && maxL < 0 {
			return ref(c.p.str)
		}
		return seq(lit(`"`), c.bounded(ref(c.p.jsonChar), minL, maxL, ptr, "minLength", "maxLength"), lit(`"`))
	}
	if minL > 0 || maxL >= 0 {
		within := lo >= minL && (maxL < 0 || (hi >= 0 && hi <= maxL))
		switch {
		case within:
		case single != nil:
			nmin, nmax := single.min, single.max
			if minL > nmin {
				nmin = minL
			}
			if maxL >= 0 && (nmax < 0 || maxL < nmax) {
				nmax = maxL
			}
			if nmax >= 0 && nmax < nmin {
				return nNone
			}
			content = c.bounded(c.charsOf(single.subs[0].ranges), nmin, nmax, ptr, "minLength", "maxLength")
		default:
			if minL > lo {
				c.relaxf(ptr, "minLength", "minLength beside a pattern or format is not enforced")
			}
			if maxL >= 0 && (hi < 0 || hi > maxL) {
				c.relaxf(ptr, "maxLength", "maxLength beside a pattern or format is not enforced")
			}
		}
	}
	return seq(lit(`"`), content, lit(`"`))
}

// charsOf returns a node for one string character whose code point is in
// rs, in the form the JSON encoding writes it: raw, or escaped where JSON
// requires (", \, control characters), plus \/ for '/'.
func (c *compiler) charsOf(rs []crange) *gnode {
	rs = normRanges(rs)
	key := fmt.Sprint(rs)
	if n, ok := c.chars[key]; ok {
		return n
	}
	var alts []*gnode
	alts = append(alts, class(intersectRanges(rs, rawChars)...))
	if inRanges(rs, '"') {
		alts = append(alts, lit(`\"`))
	}
	if inRanges(rs, '\\') {
		alts = append(alts, lit(`\\`))
	}
	if inRanges(rs, '/') {
		alts = append(alts, lit(`\/`))
	}
	ctrl := intersectRanges(rs, []crange{{0, 0x1F}})
	if len(ctrl) == 1 && ctrl[0].lo == 0 && ctrl[0].hi == 0x1F {
		alts = append(alts, seq(lit(`\`), alt(class(crange{'b', 'b'}, crange{'f', 'f'}, crange{'n', 'n'}, crange{'r', 'r'}, crange{'t', 't'}),
			seq(lit("u00"), alt(
				seq(lit("0"), class(crange{'0', '7'}, crange{'b', 'b'}, crange{'e', 'f'}, crange{'B', 'B'}, crange{'E', 'F'})),
				seq(lit("1"), hexDigit()))))))
	} else {
		for _, r := range ctrl {
			for cp := r.lo; cp <= r.hi; cp++ {
				var b strings.Builder
				writeJSONString(&b, string(cp))
				e := b.String()
				alts = append(alts, lit(e[1:len(e)-1]))
			}
		}
	}
	n := alt(alts...)
	if n.op == gAlt {
		n = ref(&grule{hint: "char", body: n})
	}
	c.chars[key] = n
	return n
}

func inRanges(rs []crange, r rune) bool {
	for _, x := range rs {
		if r >= x.lo && r <= x.hi {
			return true
		}
	}
	return false
}

func intersectRanges(a, b []crange) []crange {
	var out []crange
	for _, x := range a {
		for _, y := range b {
			lo, hi := x.lo, x.hi
			if y.lo > lo {
				lo = y.lo
			}
			if y.hi < hi {
				hi = y.hi
			}
			if lo <= hi {
				out = append(out, crange{lo, hi})
			}
		}
	}
	return normRanges(out)
}

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
	if u := s.get("uniqueItems"); u != nil && u.kind == jsonBool && u.b && (maxI < 0 || maxI > 1) {
		c.relaxf(ptr, "uniqueItems", "uniqueness of items is not expressible in the grammar; the gateway checks it")
	}
	if maxI > maxRepeat {
		c.relaxf(ptr, "maxItems", "maxItems %d is above the grammar's repetition limit %d; not enforced", maxI, maxRepeat)
		maxI = -1
	}
	if minI > maxRepeat {
		c.relaxf(ptr, "minItems", "minItems %d is above the grammar's repetition limit %d; %d is enforced", minI, maxRepeat, maxRepeat)
		minI = maxRepeat
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
	var props []oprop
	declared := map[string]bool{}
	if pv := s.get("properties"); pv != nil && pv.kind == jsonObject {
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
		for i, pat := range pp.keysOrNil() {
			if ok, _ := regexMatch(pat, r); ok {
				if sch == nil {
					sch = pp.vals[i]
				} else {
					sch = c.allOfOf(sch, pp.vals[i])
				}
			}
		}
		if sch == nil {
			if !extras {
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
			if ok, _ := regexMatch(pat, props[i].name); ok {
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
	var kvs []*gnode
	var kept []oprop
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
	rest := ref(c.keyRest())
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
			kidRanges = append(kidRanges, crange{r, r})
			if r < 0x20 || r == '"' || r == '\\' {
				special = true
			}
		}
		other := intersectRanges(rawChars, negRanges(kidRanges))
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

func (c *compiler) keyRest() *grule { return keyRestRule }

// admits is a small validator used to filter enum and const values and
// declared property names; keywords it does not know count as satisfied.
func (c *compiler) admits(s, v *jsonValue, depth int) bool {
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
	if ev := s.get("enum"); ev != nil && ev.kind == jsonArray {
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
			if ok, err := regexMatch(p.s, v.s); err == nil && !ok {
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
			} else if ap := s.get("additionalProperties"); ap != nil && !matchesAnyPattern(s, k) && !c.admits(ap, v.vals[i], depth+1) {
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

// sortedKeys is used where map order must not leak into output.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
