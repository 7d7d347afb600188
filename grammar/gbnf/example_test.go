package gbnf_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// Parse reads a llama.cpp grammar; a Matcher follows an output byte by
// byte, which is what a token mask needs, and can try a candidate token's
// bytes and come back.
func Example() {
	src := `root ::= "{\"title\":" " "? "\"" [a-z]+ "\"}"`
	g, err := gbnf.Parse(src)
	if err != nil {
		log.Fatal(err)
	}
	m, err := gbnf.NewMatcher(g) // starts at root; Clone and Reset are cheap
	if err != nil {
		log.Fatal(err)
	}
	next := m.Allowed()   // the bytes that may come next (a 256-bit set)
	ok := m.Advance('[')  // false: refused, and the matcher is unchanged
	ok2 := m.Advance('{') // true
	done := m.Accepts()   // false: the output so far is not a complete sentence
	mk := m.Mark()        // try a candidate token's bytes, then come back:
	_, err = m.WriteString(`"tit`)
	back := m.Rewind(mk)
	fmt.Printf("%q %v %v %v %v %v\n", next.Bytes(), ok, ok2, done, err, back)

	whole, offset := g.Match([]byte(`{"title": "ABC"}`)) // the whole output at once
	fmt.Println(whole, offset)

	_, err = gbnf.Parse(`root ::= "a"{,3}`)
	var perr *gbnf.ParseError
	fmt.Println(errors.As(err, &perr), perr.Line, perr.Col, perr.Offset)
	// Output:
	// "{" false true false <nil> true
	// false 11
	// true 1 14 13
}
