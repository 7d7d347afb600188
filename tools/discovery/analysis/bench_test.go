package analysis

import "testing"

var benchQueries = []struct{ name, text string }{
	{"en", "please create a new issue in the payments repository about failed refunds"},
	{"es", "¿Puedes borrar todos los archivos antiguos de la carpeta de facturas?"},
	{"pl", "wyślij wiadomość do zespołu o jutrzejszym spotkaniu"},
	{"ident", "getHTTPResponse for ACC-12345 in owner/repo#94218"},
}

func BenchmarkTerms(b *testing.B) {
	a := New(nil)
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			dst := make([]string, 0, 32)
			b.ReportAllocs()
			for b.Loop() {
				dst = a.Terms(dst[:0], q.text, "")
			}
		})
	}
}

func BenchmarkTokens(b *testing.B) {
	a := New(nil)
	dst := make([]string, 0, 32)
	b.ReportAllocs()
	for b.Loop() {
		dst = a.Tokens(dst[:0], benchQueries[0].text)
	}
}

func BenchmarkDetect(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Detect(benchQueries[1].text)
	}
}
