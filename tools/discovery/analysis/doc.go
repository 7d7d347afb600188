// Package analysis turns text into the terms that toolgate's discovery index
// and embedders compare: it tokenizes, splits identifiers, folds Unicode,
// drops stop words and stems, for English, Spanish and Polish.
//
// The pipeline of [Analyzer.Terms] is:
//
//  1. tokenize on runs of Unicode letters and digits (an apostrophe between
//     letters joins: "user's" → "users", "don't" → "dont");
//  2. split identifiers inside a run: camelCase and PascalCase ("getHTTPResponse"
//     → get, http, response), letter/digit boundaries ("utf8" → utf, 8);
//     snake_case, kebab-case and dotted.names split at step 1;
//  3. fold: NFKD, combining marks removed, lower case, and the letters NFKD
//     does not decompose mapped by hand (ß → ss, ł → l, đ → d, ø → o,
//     æ → ae, œ → oe, ı → i, þ → th);
//  4. drop stop words of the text's language (short standard lists that keep
//     words which change what a tool request means: see [IsStopWord]);
//  5. stem: English with the Snowball English (Porter2) algorithm, Spanish
//     with Snowball Spanish, Polish with a light suffix-stripping stemmer.
//
// The language is the caller's or, when the caller passes "", guessed by
// [Detect] from diacritics and function words. Stemmers run on folded words,
// so a request typed without accents ("cancion") stems like one typed with
// them ("canción").
//
// An [Analyzer] is immutable and safe for concurrent use. Terms and Tokens
// append to a caller-owned slice and allocate at most one string per call
// for the folded text plus one per stem that is not a prefix of its word
// the first time it is seen: an Analyzer caches stems per language
// ([Options.StemCache] words each, 2^15 by default, the cache starting over
// when full), so that the words a catalog and its requests repeat are
// stemmed once. The package function Stem keeps no cache.
package analysis
