// Package gbnf is the grammar language of llama.cpp (GBNF), as this package
// reads ([Parse]), prints ([Grammar.String], the one GBNF printer of the module:
// package grammar writes its grammars with the same pieces, [AppendLiteral],
// [AppendClass] and [AppendRepeatSuffix]) and matches
// ([Matcher]). It imports only the standard library.
//
//	g, err := gbnf.Parse(src)   // *ParseError with line and column
//	ok, off := g.Match(output) // or a Matcher, byte by byte: Advance, Allowed, Accepts
//
// # The language
//
// Parse accepts exactly the syntax of llama.cpp's grammar parser
// (src/llama-grammar.cpp, as vendored in ollama v0.17.4):
//
//		root  ::= object            # a rule: name ::= alternatives
//		object ::= "{" ws ( pair ( "," ws pair )* )? "}" ws
//		ws    ::= [ \t\n]{0,20}     # char class, counted repetition
//		name  ::= [^"\\\x00-\x1F]+  # negated class with an escaped range
//
//	  - Rule names use [a-zA-Z0-9-] only ("_" is not allowed); the start rule
//	    is "root" and must exist.
//	  - Terminals: "literal" strings, [classes] (ranges over Unicode code
//	    points, negated with ^), "." for any code point, and token references
//	    <[id]> / !<[id]>, which parse but never match text.
//	  - Escapes inside literals and classes: \xHH \uHHHH \UHHHHHHHH \t \r \n
//	    \\ \" \[ \]; nothing else ("\-" and "\d" are errors).
//	  - Grouping ( ... ), alternation |, repetition * + ? {m} {m,} {m,n}; a
//	    count is at most 2000 (llama.cpp's MAX_REPETITION_THRESHOLD) and {,n}
//	    is an error (write {0,n}).
//	  - A line break ends a rule unless it is inside parentheses or follows
//	    "|"; # starts a comment to the end of the line.
//	  - Every referenced rule must be defined; left recursion is an error. A
//	    rule defined twice keeps its last definition, as in llama.cpp.
//
// Parse is stricter than llama.cpp where llama.cpp would crash, hang or
// silently misread the grammar: a repetition of something that can match the
// empty string (llama.cpp recurses until the stack overflows), {m,n} with
// n < m (llama.cpp expands it until memory runs out), code points above
// U+10FFFF, token ids above 2^32-1, invalid UTF-8 inside literals and
// classes, NUL bytes (llama.cpp stops reading at the first NUL), and groups
// or stacked repetitions nested more than 1000 deep are errors here.
//
// # Matching
//
// A [Matcher] recognises exactly the sentences llama.cpp's stack machine
// accepts (llama_grammar_accept, code point by code point, whole input from
// root), but byte by byte: a multi-byte UTF-8 code point is checked as its
// bytes arrive, so a byte is refused as soon as no continuation of it can
// match. Input must be valid UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF); llama.cpp's decoder is laxer there. Where
// llama.cpp's work grows exponentially (shared rules reached along many
// paths) the Matcher expands each distinct stack once per byte, and where
// the number of live stacks itself explodes it refuses the byte
// ([ErrTooManyStacks]) instead of exhausting memory.
//
// A token mask (package grammar/mask) asks more of a Matcher: [State] keys
// its position for caching, and [Matcher.Run] and [Matcher.RunAllowed]
// tell how far a run of one character class (a [CodeRun]) surely goes
// from here and what may follow it, so that the tokens made of such runs
// are decided without trying each.
package gbnf
