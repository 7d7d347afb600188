package grammar

// The grammar pieces every compiled schema shares: JSON whitespace,
// string characters, numbers and the "any JSON value" grammar. They are
// package-level rules, built once and never modified, so that grammars of
// several tools merged into one turn grammar share them by identity.

// wsMaxIndent bounds the indentation after a newline between two tokens.
const wsMaxIndent = 20

type prims struct {
	ws       *gnode // inter-token whitespace (empty in compact mode)
	value    *grule // any JSON value
	object   *grule
	array    *grule
	str      *grule // any JSON string, quotes included
	number   *grule
	integer  *grule
	jsonChar *grule // one code point of a string, raw or escaped
	keyChar  *grule // one code point in canonical form (no \/, no \u for printable)
}

var (
	hexRanges         = []crange{{Lo: '0', Hi: '9'}, {Lo: 'A', Hi: 'F'}, {Lo: 'a', Hi: 'f'}}
	rawChars          = []crange{{Lo: 0x20, Hi: '!'}, {Lo: '#', Hi: '['}, {Lo: ']', Hi: 0x10FFFF}} // not " \ or a control
	digitClass        = class(crange{Lo: '0', Hi: '9'})
	nonZeroDigitClass = class(crange{Lo: '1', Hi: '9'})

	jsonCharRule = buildJSONChar()
	keyCharRule  = buildKeyChar()
	spaced       = buildPrims(false)
	compact      = buildPrims(true)
)

func hexDigit() *gnode { return class(hexRanges...) }

// buildJSONChar: a raw code point, or any JSON escape, with \uXXXX for a
// non-surrogate and a surrogate pair \uD8xx\uDCxx for the supplementary
// planes (one code point, as JSON Schema counts string length). Lone
// surrogates are not valid Unicode and are rejected.
func buildJSONChar() *grule {
	h := hexDigit()
	nonSurrogate := alt(
		seq(class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'a', Hi: 'c'}, crange{Lo: 'A', Hi: 'C'}, crange{Lo: 'e', Hi: 'f'}, crange{Lo: 'E', Hi: 'F'}), h, h, h),
		seq(class(crange{Lo: 'd', Hi: 'd'}, crange{Lo: 'D', Hi: 'D'}), class(crange{Lo: '0', Hi: '7'}), h, h),
	)
	high := seq(class(crange{Lo: 'd', Hi: 'd'}, crange{Lo: 'D', Hi: 'D'}), class(crange{Lo: '8', Hi: '9'}, crange{Lo: 'a', Hi: 'b'}, crange{Lo: 'A', Hi: 'B'}), h, h)
	low := seq(class(crange{Lo: 'd', Hi: 'd'}, crange{Lo: 'D', Hi: 'D'}), class(crange{Lo: 'c', Hi: 'f'}, crange{Lo: 'C', Hi: 'F'}), h, h)
	esc := &grule{hint: "json-escape", body: alt(
		class(crange{Lo: '"', Hi: '"'}, crange{Lo: '\\', Hi: '\\'}, crange{Lo: '/', Hi: '/'}, crange{Lo: 'b', Hi: 'b'}, crange{Lo: 'f', Hi: 'f'}, crange{Lo: 'n', Hi: 'n'}, crange{Lo: 'r', Hi: 'r'}, crange{Lo: 't', Hi: 't'}),
		seq(lit("u"), nonSurrogate),
		seq(lit("u"), high, lit(`\u`), low),
	)}
	return &grule{hint: "json-char", body: alt(class(rawChars...), seq(lit(`\`), ref(esc)))}
}

// buildKeyChar: one code point in the canonical form writeJSONString
// produces, so that every string has exactly one spelling. Property names
// use it, which makes "any name but the declared ones" exact.
func buildKeyChar() *grule {
	return &grule{hint: "key-char", body: alt(class(rawChars...), seq(lit(`\`), ctrlEscapeBody()))}
}

// ctrlEscapeBody is the part after the backslash of the canonical escapes.
func ctrlEscapeBody() *gnode {
	return alt(class(crange{Lo: '"', Hi: '"'}, crange{Lo: '\\', Hi: '\\'}), ctrlEscapes())
}

// ctrlEscapes is the part after the backslash of the canonical escapes of
// the control characters: \b \f \n \r \t and \u00XX for the others.
func ctrlEscapes() *gnode {
	return alt(
		class(crange{Lo: 'b', Hi: 'b'}, crange{Lo: 'f', Hi: 'f'}, crange{Lo: 'n', Hi: 'n'}, crange{Lo: 'r', Hi: 'r'}, crange{Lo: 't', Hi: 't'}),
		seq(lit("u00"), alt(
			seq(lit("0"), class(crange{Lo: '0', Hi: '7'}, crange{Lo: 'b', Hi: 'b'}, crange{Lo: 'e', Hi: 'f'}, crange{Lo: 'B', Hi: 'B'}, crange{Lo: 'E', Hi: 'F'})),
			seq(lit("1"), hexDigit()))),
	)
}

func buildPrims(compactMode bool) *prims {
	p := &prims{jsonChar: jsonCharRule, keyChar: keyCharRule}
	if compactMode {
		p.ws = nEmpty
	} else {
		wsRule := &grule{hint: "ws", body: alt(lit(" "), seq(lit("\n"), rep(class(crange{Lo: ' ', Hi: ' '}, crange{Lo: '\t', Hi: '\t'}), 0, wsMaxIndent)), nEmpty)}
		p.ws = ref(wsRule)
	}
	suffix := func(s string) string {
		if compactMode {
			return s + "-c"
		}
		return s
	}
	p.str = &grule{hint: "string", body: seq(lit(`"`), star(ref(p.jsonChar)), lit(`"`))}
	intPart := alt(lit("0"), seq(nonZeroDigitClass, star(digitClass)))
	p.integer = &grule{hint: "integer", body: seq(opt(lit("-")), intPart)}
	p.number = &grule{hint: "number", body: seq(opt(lit("-")), intPart,
		opt(seq(lit("."), plus(digitClass))),
		// At most four exponent digits: the gateway's validator refuses an
		// exponent beyond ±10,000 (internal/jsonschema maxExponent).
		opt(seq(class(crange{Lo: 'e', Hi: 'e'}, crange{Lo: 'E', Hi: 'E'}), opt(class(crange{Lo: '+', Hi: '+'}, crange{Lo: '-', Hi: '-'})), rep(digitClass, 1, 4))))}
	p.value = &grule{hint: suffix("value")}
	p.object = &grule{hint: suffix("object")}
	p.array = &grule{hint: suffix("array")}
	member := seq(ref(p.str), p.ws, lit(":"), p.ws, ref(p.value))
	p.object.body = alt(
		seq(lit("{"), p.ws, lit("}")),
		seq(lit("{"), p.ws, member, star(seq(p.ws, lit(","), p.ws, member)), p.ws, lit("}")))
	p.array.body = alt(
		seq(lit("["), p.ws, lit("]")),
		seq(lit("["), p.ws, ref(p.value), star(seq(p.ws, lit(","), p.ws, ref(p.value))), p.ws, lit("]")))
	p.value.body = alt(ref(p.object), ref(p.array), ref(p.str), ref(p.number), lit("true"), lit("false"), lit("null"))
	return p
}
