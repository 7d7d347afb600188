package ngram

import (
	"context"
	"testing"
)

var benchQueries = []struct{ name, text string }{
	{"en", "please create a new issue in the payments repository about failed refunds"},
	{"es", "¿Puedes borrar todos los archivos antiguos de la carpeta de facturas?"},
	{"pl", "wyślij wiadomość do zespołu o jutrzejszym spotkaniu"},
}

// BenchmarkEmbedTo measures one query embedding into a reused vector (the
// discovery query path).
func BenchmarkEmbedTo(b *testing.B) {
	e := New(nil)
	dst := make([]float32, e.Dim())
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.EmbedTo(dst, q.text)
			}
		})
	}
}

// BenchmarkEmbed measures the Embedder interface call for one text, which
// allocates the returned vector.
func BenchmarkEmbed(b *testing.B) {
	e := New(nil)
	ctx := context.Background()
	texts := []string{benchQueries[0].text}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedCard measures a typical card text (name, summary, aliases,
// parameter names), the index-build path.
func BenchmarkEmbedCard(b *testing.B) {
	e := New(nil)
	dst := make([]float32, e.Dim())
	card := "create_issue Create a new issue in a GitHub repository. aliases: open ticket, report bug, file issue. " +
		"params: owner repo title body labels assignees milestone"
	b.ReportAllocs()
	for b.Loop() {
		e.EmbedTo(dst, card)
	}
}

// BenchmarkEmbedNonZero measures the discovery query path: a request's
// non-zero dimensions into reused slices, its words in the cache.
func BenchmarkEmbedNonZero(b *testing.B) {
	e := New(nil)
	dims, vals := make([]int32, 0, e.Dim()), make([]float32, 0, e.Dim())
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dims, vals = e.EmbedNonZero(dims[:0], vals[:0], q.text)
			}
		})
	}
}
