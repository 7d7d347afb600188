// Package discovery finds, for one request, the few tools a model should
// see among those the caller is authorized for.
//
//	d, err := discovery.New(nil) // BM25F + the embedded n-gram embedder, fused
//	view := reg.Snapshot().Authorize(principal)
//	sl, err := d.Shortlist(ctx, view, discovery.Request{Query: "close issue #4521", K: 5})
//	for _, c := range sl.Candidates { ... c.Tool.InputSchema ... }
//
// Authorization comes first: Shortlist scores only the tools the
// *tools.View allows (postings and vectors are filtered with view.Bits()
// while scoring), so an unauthorized tool can never be returned.
//
// The Discoverer keeps an Index for the registry snapshot it was last asked
// about and rebuilds it when a view of another snapshot arrives, reusing the
// analysis, vectors and token counts of the tools that did not change. The
// index holds, per card:
//
//   - BM25F postings over the card's fields, each with its own weight and
//     length normalisation: the name split from snake/camel/kebab case,
//     the namespace, summary, description, aliases, tags and group, and the
//     input schema's parameter names, descriptions and enum values. Text is
//     analysed by tools/discovery/analysis (folding, stop words, stemming for English,
//     Spanish and Polish). A term's IDF is capped by its frequency in a
//     large catalog of tool descriptions ([Options.NoBackgroundIDF]). The
//     per-term impact is precomputed, so a query is a sum of impacts.
//     Repetition buys no rank (security invariant 10): a term counts at
//     most twice per field and, summed over the card's fields, at most as
//     much as twice in the name; an identifier naming another namespace's
//     tool is not indexed for the card that writes it (NamedTools).
//   - not_for postings, kept apart: a request matching a tool's not_for
//     sentence lowers that tool's score (by half the BM25 weight of the
//     match) and never raises any score or adds a tool to the candidates.
//   - what identifiers its parameters can take: a JSON Schema pattern
//     (compiled once per distinct pattern with ECMA-262 semantics), a format
//     (uri, email) or a telling name (url, path, repo, issue_number,
//     account). A request carrying an exact id (#94218, ACC-12345, owner/repo,
//     a path, a URL, an email) adds a bonus to those tools.
//   - the handles its input schema requires: a credential (token,
//     session) or the id of an entity (meeting_id), and the tools of its
//     namespace that produce each (a get-token tool, list_meetings).
//     When a tool leading the ranking needs a handle the request does
//     not carry, its producer joins the shortlist after the tools the
//     request ranked, in place of one that did not clearly match, if the
//     view authorizes it (Candidate.CompanionOf, Options.NoCompanions).
//   - a dense vector from the Embedder (default: tools/discovery/ngram),
//     stored as an int8 row; the request's vector re-scores the lexical
//     side's best tools.
//   - the o200k token count of its schema as a model sees it.
//
// Spanish and Polish requests are analysed in their language and translated
// word by word to English with tools/discovery/lexicon. The lexical and dense scores
// are normalised and fused ([FusionScore] by default; [FusionRRF] is there for
// comparison), and a confidence in [0,1], Platt-calibrated on the public
// datasets, estimates whether the first candidate is right. Below
// [Options.ReformulateBelow] the Reformulator rewrites the request and the
// more confident of the two results is kept.
//
// Every query can be recorded in a Log ([NewJSONLog], [OpenJSONLog]) and counted
// in Prometheus metrics (toolgate_discovery_queries_total,
// toolgate_discovery_reformulations_total,
// toolgate_discovery_low_confidence_total,
// toolgate_discovery_shortlist_seconds, toolgate_discovery_shortlist_size,
// toolgate_discovery_confidence). [Discoverer.RecordOutcome] records the
// tool finally called, so that Misses can find the requests whose first
// shortlist lacked it, and counts such calls as they happen
// (toolgate_discovery_linked_calls_total, toolgate_discovery_misses_total). Evaluate scores a Discoverer on a
// labeled query set; it is what `toolgate eval` runs.
//
// [Options.Model] adds a third ranking by an embedding model the user runs
// ([ModelOptions]: Ollama's /api/embed or an OpenAI-compatible
// /v1/embeddings through the llm adapters), fused with the built-in one;
// the cards' vectors are embedded once, in the background, and cached on
// disk (tools/discovery/embedcache), and a request the model cannot embed
// within its timeout is answered by the built-in ranking alone
// ([Shortlist.Model], toolgate_discovery_model_queries_total).
//
// A shortlist holds only tools the request gave evidence for (a matched
// word, identifier or translation, a positive cosine): a request that
// matches two tools gets two, one that matches nothing gets none and
// confidence 0 ([Shortlist.Candidates]), so that a caller can say so
// instead of showing a model arbitrary tools.
//
// Ranking is deterministic: the same snapshot, view and request give the
// same shortlist (ties are broken by tool ID); with [Options.Model], given
// the same [Shortlist.Model] outcome. The clock is injected and
// only timestamps logs and metrics.
package discovery
