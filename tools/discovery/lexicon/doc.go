// Package lexicon is toolgate's embedded word knowledge for discovery: groups
// of English words that mean the same action or object in tool requests
// ("delete", "remove", "erase"; "issue", "ticket", "bug"), synonym sets
// derived from WordNet for common English words, and Spanish → English and
// Polish → English word lists for request and tool vocabulary, and pairs of a
// verb and an object that give the verb another action's meaning (to "open"
// a pull request is to create one).
//
// The data ships inside the binary (go:embed of the files under data/), so
// the lexicon needs no download and no network. [Default] parses it once.
// The ngram embedder maps words to concepts with [Lexicon.Concepts], so that
// "borrar archivo" and "delete file" share features; the offline
// reformulator widens a weak query with [Lexicon.Expand]. Discovery widens
// a request word no card uses with [Lexicon.StemSynonyms], and reads a
// verb by its object with [Lexicon.Sense].
//
// Words are looked up folded (see analysis.Fold) and, when the word itself
// is not listed, by its stem in the word's language, so inflections
// ("archivos", "plików", "deleting") find their entries.
//
// [Open] adds optional files a user points to (toolgate --lexicon
// KIND=FILE, or discovery.Options.Lexicon): data that must not be embedded
// because its license is the GPL or LGPL, such as the Spanish and Polish
// lists the generator derives from the mythes thesauri and FreeDict.
//
// Sources and licenses are described in data/README.md; the WordNet license
// is in data/LICENSE-WordNet.txt. The generated files are rebuilt from the
// Debian packages with go generate (apt-get install wordnet-base).
package lexicon

//go:generate go run ./internal/gen -wordnet /usr/share/wordnet -out data
