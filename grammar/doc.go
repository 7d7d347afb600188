// Package grammar turns tool schemas into the constraints an inference
// backend enforces while the model writes, so that a tool call is valid by
// construction: no invented parameter, no wrong type, no broken JSON.
//
// # JSON Schema to constraints
//
// [FromSchema] compiles a JSON Schema (draft 2020-12 as tools use it;
// draft-07 forms such as definitions, array-form items and additionalItems
// are accepted) into a GBNF grammar:
//
//	res, err := grammar.FromSchema(schema, nil)
//	// res.GBNF: the grammar for llama.cpp's "grammar" field
//	// res.Relaxations: what it does not enforce, each a JSON pointer, keyword and reason
//
// [Envelope] compiles the turn envelope for a shortlist of tools:
// {"action":"call","tool":T,"arguments":A} with A bound to T's schema,
// {"action":"answer","text":...} and {"action":"find_tools","query":...}.
// Each tool compiles on its own: one whose schema fails is reported in
// [EnvelopeResult.Excluded] and left out, and the call branch is absent when
// none compiles (never an unconstrained fallback). [EnvelopeSchema] is the
// same envelope as a JSON Schema (Ollama's format), and [OpenAIStrict]
// rewrites a schema into OpenAI's strict-mode subset.
//
// What the grammars guarantee:
//
//   - Never silently weaker. Every constraint the grammar cannot express
//     (uniqueItems, multipleOf other than 10^-k, contains, dependentRequired,
//     if/then/else, lookaround in a pattern, bounds above 2000 repetitions,
//     unknown keywords, ...) is returned as a [Relaxation]; the gateway's
//     validator still checks it. Options.Strict turns relaxations into an
//     error. Keywords starting with "x-" and annotations (title,
//     description, default, examples, ...) are ignored silently.
//   - No undeclared property unless the schema admits one explicitly
//     (additionalProperties true or a schema, or patternProperties). An
//     object schema without additionalProperties is closed by default,
//     which is stricter than JSON Schema; Options.OpenObjects follows the
//     specification instead. A closed schema whose every value needs an
//     undeclared property (required names one, minProperties asks for more
//     than it declares) is an error wrapping [ErrUnsatisfiable] that says
//     so and where.
//   - Object members appear in declaration order: the declared properties
//     (merged through $ref, allOf, anyOf and oneOf in that order), each
//     optional one present or absent, then the names required but not
//     declared, then undeclared members. A model writes what the grammar
//     allows, so this costs nothing; a test that checks existing JSON
//     against a grammar must write it in that order (the suites here do).
//   - Bounded whitespace: between two tokens nothing, one space, or one
//     newline and at most 20 spaces or tabs (Options.Compact: nothing), so a
//     model cannot loop on whitespace.
//   - Numbers: JSON number syntax without leading zeros; -0 and 1e05 are
//     numbers. An integer is written as digits: 1.0 and 1e2 are integers in
//     JSON Schema 2020-12, but a model under these grammars writes 1 and 100
//     (the gateway still accepts 1.0 from other clients). Bounds on integers
//     and on numbers with integral bounds compile to exact digit grammars
//     (any magnitude, negative-only ranges included); a bounded number is
//     written without an exponent. multipleOf 10^-k (0.01 for cents) is
//     exact: at most k fraction digits.
//   - Strings: every JSON escape, \uXXXX with surrogate pairs (a pair is
//     one character, as minLength/maxLength count code points), no raw
//     control characters, no lone surrogates. Patterns (ECMA-262) translate
//     into grammar: \d \w \s and their negations, classes, `.`, groups,
//     (?:...), alternation, greedy and lazy quantifiers, counted repetition,
//     anchors; an unanchored pattern means "contains". Formats date, time,
//     date-time (RFC 3339; leap years exact, a leap second only as
//     23:59:60 UTC), uuid, ipv4, ipv6, hostname, email, uri and uri-template compile to
//     grammars; other formats are relaxations. Format is asserted (the
//     format-assertion vocabulary), not only annotated.
//   - enum and const take any JSON value, written in canonical form
//     (compact, numbers as above); values the sibling keywords exclude are
//     left out. Past 1,024 values their common prefixes are factored out,
//     so that a matcher holds a parse stack per next code point rather
//     than per value (past [gbnf.MaxStacks] it would refuse them all).
//   - $ref and $defs (also definitions, $id, $anchor, JSON pointers into
//     any subschema such as an anyOf index) compile to rules, so recursive
//     schemas stay finite; references to other documents are relaxations.
//     allOf merges into one schema where the keywords allow, and anyOf
//     beside properties distributes over the branches; oneOf is anyOf plus
//     a relaxation unless the branches are disjoint by type or const.
//   - `{}` and true admit any JSON value; false admits none (a schema that
//     admits nothing is an error, ErrUnsatisfiable).
//   - Output is llama.cpp GBNF: names of [a-zA-Z0-9-], only llama.cpp's
//     escapes, no left recursion, no repetition of something that can match
//     empty, counts at most 2000. Every grammar the tests emit is checked
//     with llama.cpp's own parser (gbnf-check).
//
// # Bounded generation
//
// A schema that leaves a string or an array unbounded lets a weak model
// write until its context runs out. [Options.MaxStringLength] and
// [Options.MaxItems] bound such strings and arrays (never below the schema's
// minLength or minItems, never replacing a bound the schema sets; strings
// constrained by an unanchored pattern or a format keep their own length),
// and [Options.MaxAnswerLength] and MaxQueryLength bound the envelope's
// answer text and find_tools query. Each bound is reported as a [Bound]
// ([Result.Bounds], [EnvelopeResult.Bounds]; [EnvelopeSchema] writes the
// envelope's as maxLength). The defaults differ by entry point: [FromSchema]
// bounds nothing unless asked (its grammars are checked against the JSON
// Schema test suites, whose valid instances a bound could refuse), while
// Envelope, the grammar a model writes a turn under, applies
// [DefaultMaxStringLength] (1000 code points), [DefaultMaxItems] (50),
// [DefaultMaxAnswerLength] (600) and [DefaultMaxQueryLength] (200), the
// bounds the agent compiles every turn with (llm.DefaultBounds); a
// negative value turns a bound off. Values above the repetition limit
// (2000) are refused with [ErrOptions]. Nested generic values (a property
// declared as {} or additionalProperties: true) are not bounded.
//
// Compilation is a pure function of the schema and the options (no clock,
// no I/O). An optional, bounded [Cache] on [Options] keeps results, keyed by
// the input bytes and options, so that a repeated schema or shortlist
// costs a hash. All functions are safe for concurrent use; results are
// immutable and shared.
//
// The GBNF language itself (parser, printer, matcher) is package
// [github.com/toolgate/toolgate/grammar/gbnf]; this package prints its
// grammars with gbnf's printer pieces ([gbnf.AppendLiteral],
// [gbnf.AppendClass], [gbnf.AppendRepeatSuffix]) straight into one buffer,
// and builds gbnf values where it needs a Matcher.
package grammar
