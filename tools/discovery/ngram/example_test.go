package ngram_test

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/tools/discovery/ngram"
)

func Example() {
	e := ngram.New(nil)
	vs, _ := e.Embed(context.Background(), []string{"delete a file", "borrar archivo", "send a slack message"})
	cos := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(e.Dim(), cos(vs[0], vs[1]) > cos(vs[0], vs[2]))
	// Output: 512 true
}
