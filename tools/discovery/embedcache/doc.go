// Package embedcache keeps the vectors an embedding model returned for
// tool cards in one file per model, so that a catalog is embedded once and
// a restart, or another process on the same machine, reuses them.
//
// A vector is found by the [Key] of the exact text that was embedded (its
// SHA-256), within the file of one model identity (the API, the server's
// URL and the model name): a card that changes has another text and so
// another key, and is embedded again; another model or server has another
// file. Entries nobody looked up for the longest time are dropped when a
// file would exceed [MaxEntries] or [MaxBytes].
//
// The file format is versioned and checksummed (see [Decode]). A file that
// is corrupt, truncated, of another version, of another model, or over the
// bounds is never trusted: [Open] reports it through its warn function and
// starts empty, and the next [Cache.Save] replaces it. Save writes a
// temporary file beside the final one and renames it over, merging what
// another process saved meanwhile, so that concurrent processes never read
// a half-written file; at worst one's new entries are lost and embedded
// again later.
//
//	c, err := embedcache.Open(dir, "ollama http://localhost:11434 nomic-embed-text", warn)
//	v, ok := c.Lookup(embedcache.KeyOf(text))
//	...
//	c.Add(keys, vecs)
//	err = c.Save()
package embedcache
