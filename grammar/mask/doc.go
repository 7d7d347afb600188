// Package mask computes which tokens of a model's vocabulary a GBNF
// grammar allows next: the token mask a sampler applies to the logits
// before it picks a token, so that the model can only write sentences of
// the grammar. It is toolgate's own engine, over the [gbnf.Matcher], for
// backends that sample in-process; a server (llama-server, Ollama) applies
// its own.
//
//	vocab, err := mask.ReadGGUF(f)                // or mask.NewVocabulary
//	eng, err := mask.NewEngine(g, vocab, nil)      // once per grammar
//	s := eng.NewSession()                          // once per generation
//	allowed := mask.NewBitset(vocab.Len())
//	for !done {
//		s.Fill(allowed)                            // then logits[id] = -Inf where !allowed.Has(id)
//		id := sample(logits)
//		err = s.Accept(id)                         // the end-of-generation token ends it
//	}
//
// # What a token may be
//
// A token is allowed when the matcher accepts all of its bytes from the
// current position ([Session.Accept] then succeeds). In detail, the same
// as llama.cpp's llama_grammar_apply except where noted:
//
//   - An end-of-generation token ([KindEnd]) is allowed exactly when the
//     output so far is a complete sentence of the grammar
//     ([gbnf.Matcher.Accepts]).
//   - A text token whose bytes run past the end of the grammar is refused:
//     a byte is allowed only where some continuation of the output stays a
//     sentence.
//   - UTF-8 is checked byte by byte, so a token may hold part of a
//     multi-byte code point (a byte-fallback token such as <0xE2>) and the
//     next tokens complete it; the bytes must form valid UTF-8 (llama.cpp's
//     decoder also takes overlong forms, surrogates and 0xF5..0xFF leads
//     inside a negated class, which this engine refuses). The end token is
//     refused while a code point is unfinished (llama.cpp allows it if a
//     parse stack is complete).
//   - Inside a negated class that leaves out part of a multi-byte range
//     (a regex "." compiles to [^\n\r\u2028\u2029]), a token that ends
//     inside a code point is allowed when some completion stays in the
//     class. llama.cpp refuses such a token (seen with a lone 0xE2 byte
//     there, which could complete to U+2028), so on such grammars this
//     engine may allow a token llama.cpp refuses, never one whose every
//     continuation the grammar refuses.
//   - Control and unused tokens ([KindControl]) are never allowed: a
//     control token's text ("<s>") is not what the model means by it.
//     llama.cpp matches control tokens by their text.
//   - An empty token, or one holding a NUL byte, is never allowed
//     (llama.cpp refuses an empty piece or one starting with NUL, and
//     reads a piece only up to its first NUL).
//
// # How it is fast
//
// The vocabulary is kept as a byte trie, built once per [Vocabulary] and
// shared by every grammar. A mask is a depth-first walk of the trie
// against the matcher: each trie edge is one [gbnf.Matcher.Advance] (a
// table lookup once the matcher's lazily built automaton knows the
// state), a refused byte prunes the whole subtree, and [gbnf.Matcher.Mark]
// and Rewind step back in constant time. Only the edges the matcher's
// [gbnf.Matcher.Allowed] bytes admit are tried.
//
// Two things spare most of the walk. A [Session] caches the masks it has
// computed by [gbnf.State], so a position met again (the same key of a
// tool call, the same punctuation) costs a copy. And inside long runs of
// free text, such as a JSON string, the engine knows in advance, per
// character class of the grammar ("slice"), which tokens consist only of
// that class's code points: where [gbnf.Matcher.Run] says any run of such
// code points at least as long as the longest of those tokens is accepted,
// all of them are admitted at once and the walk skips every trie subtree
// made only of them. Of the other tokens, those whose first byte after
// their run of the class can follow no such run
// ([gbnf.Matcher.RunAllowed]: a raw newline in a JSON string) are ruled
// out without a walk, leaving the few with a quote or a backslash. Where
// a term after the run takes some of the class's code points (the "@" of
// a string whose pattern is "^.+@.+$"), the class is narrowed to the part
// that keeps the run going ([gbnf.Matcher.Narrow]: all but "@"), whose
// tokens are found on first use; the tokens with an "@" are walked, and
// below their "@" (or a domain's ".") a trie subtree whose rest is made of
// ASCII members of a class whose run goes on from there is admitted at
// once. Inside a run shorter than the longest such token (a string whose
// maxLength is below the 128 characters of cl100k's and o200k's longest
// tokens), the walk admits at once each trie subtree made only of the
// class's tokens, none longer than the run from its node.
//
// Preparing an [Engine] for a grammar costs a scan of its rules once the
// vocabulary has met its character classes (the per-class token sets are
// kept on the [Vocabulary]); docs/benchmarks.md has the figures.
package mask
