package ollama

import (
	"fmt"
	"testing"
)

func FuzzNumCtxParameter(f *testing.F) {
	for _, s := range []string{"num_ctx                        2048", "stop \"x\"\nnum_ctx 8192.0", "", "num_ctx", "num_ctx 1e30", "num_ctx NaN", "num_ctx\t-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		n, err := numCtxParameter(params)
		if n < 0 || n > maxContextSize || err != nil && n != 0 {
			t.Fatalf("numCtxParameter(%q) = %d, %v", params, n, err)
		}
	})
}

func TestNumCtxParameterRoundTrip(t *testing.T) {
	for i, n := range []int{1, 512, 2048, 131072, maxContextSize} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, form := range []string{"%-30s %d", "%s %d.0", "temperature 0.7\n%s\t%d\n"} {
				t.Run(form, func(t *testing.T) {
					params := fmt.Sprintf(form, "num_ctx", n)
					if got, err := numCtxParameter(params); got != n || err != nil {
						t.Errorf("numCtxParameter(%q) = %d, %v; want %d", params, got, err, n)
					}
				})
			}
		})
	}
}
