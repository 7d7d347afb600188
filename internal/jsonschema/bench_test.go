package jsonschema

import (
	"testing"
	"time"
)

// BenchmarkValidateTransfer validates a valid transfer call against the
// transfer schema: through Validate (the fast path proves it valid) and
// through the general validator alone, for the ratio.
func BenchmarkValidateTransfer(b *testing.B) {
	s := mustCompile(b, transferSchema, &Options{CloseObjects: true, AssertFormat: true})
	inst := mustParse(b, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.50}`)
	deadline := time.Now().Add(time.Hour)
	for _, bc := range []struct {
		name string
		f    func(any, time.Time) ([]Violation, error)
	}{{"fast", s.Validate}, {"general", s.validate}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if vs, err := bc.f(inst, deadline); err != nil || len(vs) > 0 {
					b.Fatal(vs, err)
				}
			}
		})
	}
}
