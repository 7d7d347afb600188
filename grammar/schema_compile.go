package grammar

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
	"dependentRequired": {kwHandled, tObj}, "dependentSchemas": {kwHandled, tObj}, "dependencies": {kwHandled, tObj},

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
	opts   Options
	p      *prims
	doc    *jsonValue
	relax  []Relaxation
	seen   map[Relaxation]bool
	bounds []Bound

	sites      map[*jsonValue]schemaSite // where every schema node is (indexDoc)
	plain      bool                      // some node has no base URI: "" names the document
	ids        map[string]*jsonValue     // absolute URI (no fragment) → resource
	anchors    map[string]*jsonValue     // absolute URI#anchor → node
	refRules   map[*jsonValue]*grule
	inline     []*jsonValue // $ref targets being merged (cycle guard)
	chars      map[string]*gnode
	shared     map[uint64][]*grule
	pairs      map[[2]*jsonValue]*jsonValue
	synthetic  map[*jsonValue]bool // made by allOfOf
	synthRules map[*jsonValue]*grule
	patterns   map[string]*nameMatcher  // patternProperties keys, by pattern
	contents   map[string]patternResult // translated patterns, by pattern
	relaxCalls int                      // calls of relaxf, reported or already seen
	depth      int
	steps      int // work done, against maxSteps
	fatal      error
	// closed says, the first time, where an object schema admits no value
	// only because the grammar admits no undeclared property.
	closed string
}

func newCompiler(doc *jsonValue, opts Options) *compiler {
	c := &compiler{opts: opts, p: spaced, doc: doc} // the maps are made on first write
	if opts.Compact {
		c.p = compact
	}
	return c
}

// indexDoc indexes the document the first time it is needed: only $ref
// resolution and the pointers of $ref targets read the index, and most
// tools' schemas have no $ref. The document does not change, so a late
// index is the same as an early one.
func (c *compiler) indexDoc() {
	if c.sites == nil {
		c.sites = map[*jsonValue]schemaSite{}
		c.index(c.doc, "", "", 0)
	}
}

// schemaSite is where a schema node is: its JSON pointer and the base URI
// in effect there.
type schemaSite struct{ ptr, base string }

func (c *compiler) anchorsSet(k string, v *jsonValue) {
	if c.anchors == nil {
		c.anchors = map[string]*jsonValue{}
	}
	c.anchors[k] = v
}

// bound records a limit the grammar sets where the schema sets none.
func (c *compiler) bound(ptr, keyword string, limit int) {
	c.bounds = append(c.bounds, Bound{Pointer: ptr, Keyword: keyword, Limit: limit})
}

// step counts work and reports whether the budget is spent; the first
// time it is, the compilation fails with [ErrUnsupported].
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
	for _, r := range c.shared[n.h] { // a nil map reads as empty
		if equalNodes(r.body, n) {
			if r.hint != hint {
				r.hint = shapeName(n) // shared by several places: name it by shape
			}
			return ref(r)
		}
	}
	r := &grule{hint: hint, body: n}
	if c.shared == nil {
		c.shared = map[uint64][]*grule{}
	}
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
	c.relaxCalls++
	r := Relaxation{Pointer: ptr, Keyword: keyword, Reason: fmt.Sprintf(format, args...)}
	if !c.seen[r] {
		if c.seen == nil {
			c.seen = map[Relaxation]bool{}
		}
		c.seen[r] = true
		c.relax = append(c.relax, r)
	}
}

func pointerJoin(ptr string, parts ...string) string {
	if len(parts) == 0 {
		return ptr
	}
	n := len(ptr)
	for _, p := range parts {
		n += 1 + len(p)
	}
	var b strings.Builder
	b.Grow(n) // one allocation unless a part needs escapes
	b.WriteString(ptr)
	for _, p := range parts {
		b.WriteByte('/')
		if !strings.ContainsAny(p, "~/") {
			b.WriteString(p)
			continue
		}
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(p[i])
			}
		}
	}
	return b.String()
}

// index records pointers, base URIs, $id resources and anchors.
func (c *compiler) index(v *jsonValue, ptr, base string, depth int) {
	if depth > maxJSONDepth {
		return
	}
	if v.kind == jsonArray {
		for i, e := range v.arr {
			if e.isContainer() {
				c.index(e, pointerJoin(ptr, strconv.Itoa(i)), base, depth+1)
			}
		}
		return
	}
	if v.kind != jsonObject {
		return
	}
	if _, ok := c.sites[v]; ok {
		return
	}
	if id := v.get("$id"); id != nil && id.kind == jsonString {
		if u := resolveURI(base, id.s); u != "" {
			base = strings.TrimSuffix(u, "#")
			if i := strings.IndexByte(base, '#'); i >= 0 { // draft-07 "$id": "#foo" is an anchor
				c.anchorsSet(base, v)
				base = base[:i]
			} else {
				if c.ids == nil {
					c.ids = map[string]*jsonValue{}
				}
				c.ids[base] = v
			}
		}
	}
	c.sites[v] = schemaSite{ptr, base}
	c.plain = c.plain || base == ""
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a := v.get(k); a != nil && a.kind == jsonString {
			c.anchorsSet(base+"#"+a.s, v)
		}
	}
	for i, k := range v.keys {
		switch k {
		case "enum", "const", "default", "examples", "example":
			continue
		}
		if e := v.vals[i]; e.isContainer() { // only objects and arrays are indexed: no pointer for the rest
			c.index(e, pointerJoin(ptr, k), base, depth+1)
		}
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
	c.indexDoc()
	full := resolveURI(c.sites[at].base, ref)
	if full == "" && ref != "" && ref != "#" {
		full = ref
	}
	docURI, frag := full, ""
	if i := strings.IndexByte(full, '#'); i >= 0 {
		docURI, frag = full[:i], full[i+1:]
	}
	res, ok := c.ids[docURI]
	if docURI == "" && c.plain {
		res, ok = c.doc, true
	}
	if !ok {
		if docURI != "" && docURI == c.sites[c.doc].base {
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
	c.indexDoc()
	if s, ok := c.sites[v]; ok {
		return s.ptr
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
		if slices.Contains(skip, k) || strings.HasPrefix(k, "x-") {
			continue
		}
		if info, ok := keywords[k]; !ok || info.class != kwAnnotation {
			return false
		}
	}
	return true
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
		if c.synthRules == nil {
			c.synthRules = map[*jsonValue]*grule{}
		}
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
	if c.refRules == nil {
		c.refRules = map[*jsonValue]*grule{}
	}
	c.refRules[target] = rule
	rule.body = c.value(target, c.ptrOf(target, ptr))
	if rule.body.op == gNone {
		return nNone
	}
	return ref(rule)
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
		return c.literals(s, []*jsonValue{cv}, types, false)
	}
	if ev := s.get("enum"); ev != nil {
		if ev.kind != jsonArray {
			c.relaxf(ptr, "enum", "enum is not an array; ignored")
		} else {
			return c.literals(s, ev.arr, types, true)
		}
	}
	var alts []*gnode
	if types&tNull != 0 {
		alts = append(alts, lit("null"))
	}
	if types&tBool != 0 {
		alts = append(alts, lit("true"), lit("false"))
	}
	if types&(tInt|tNum) == tNum {
		alts = append(alts, c.fractionNode(s, ptr))
	} else if types&tNum != 0 {
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
// admit; fromEnum says that vals are s's own enum.
func (c *compiler) literals(s *jsonValue, vals []*jsonValue, types typeSet, fromEnum bool) *gnode {
	texts := make([]string, 0, len(vals))
	for _, v := range vals {
		if typeOf(v)&types == 0 {
			continue
		}
		if !c.admitsAs(s, v, 0, fromEnum) {
			continue
		}
		texts = append(texts, canonicalJSON(v))
	}
	if len(texts) > factorLiteralsAbove {
		slices.Sort(texts)
		return prefixTree(slices.Compact(texts))
	}
	alts := make([]*gnode, len(texts))
	for i, t := range texts {
		alts[i] = lit(t)
	}
	return alt(alts...)
}

// factorLiteralsAbove is the number of enum values past which their
// common prefixes are factored out ([prefixTree]): side by side, each
// value is a parse stack of the matcher from its first byte on, and past
// gbnf.MaxStacks (65,536) every value would be refused. Smaller enums keep
// the plain alternation a reader expects.
const factorLiteralsAbove = 1024

// prefixTree returns the alternation of the sorted, distinct literals ss
// with common prefixes factored out, code point by code point: the
// matcher then holds a stack per distinct next code point, not per value.
// It is linear in the literals' total length.
func prefixTree(ss []string) *gnode {
	if len(ss) == 1 {
		return lit(ss[0])
	}
	first, last := ss[0], ss[len(ss)-1]
	p := 0
	for p < len(first) && p < len(last) && first[p] == last[p] {
		p++
	}
	for p > 0 && p < len(first) && !utf8.RuneStart(first[p]) {
		p-- // keep a code point whole
	}
	var alts []*gnode
	for i := 0; i < len(ss); {
		rest := ss[i][p:]
		if rest == "" {
			alts = append(alts, nEmpty)
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(rest)
		j := i + 1
		for j < len(ss) && strings.HasPrefix(ss[j][p:], rest[:n]) {
			j++
		}
		group := make([]string, j-i)
		for k := range group {
			group[k] = ss[i+k][p:]
		}
		alts = append(alts, prefixTree(group))
		i = j
	}
	return seq(lit(first[:p]), alt(alts...))
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
	const most = min(1<<40, math.MaxInt) // far above any bound a grammar can expand; fits a 32-bit int
	if f > most {
		return most
	}
	return int(f)
}
