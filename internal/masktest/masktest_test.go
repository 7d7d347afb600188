package masktest

import (
	"math/rand/v2"
	"testing"
)

func TestDivergence(t *testing.T) {
	for _, row := range []struct {
		name string
		tok  Token
		out  string
		mid  bool
		ours bool
		want string
	}{
		{"toolgate laxer: never explained", Token{Piece: []byte("a")}, "", false, true, ""},
		{"control", Token{Piece: []byte("<s>"), Control: true}, "", false, false, DivControl},
		{"end mid code point", Token{End: true}, "\xe2", true, false, DivEnd},
		{"NUL inside", Token{Piece: []byte("a\x00b")}, "", false, false, DivNUL},
		{"invalid UTF-8 lead", Token{Piece: []byte{0xf5}}, "x", false, false, DivUTF8},
		{"plain text: unexplained", Token{Piece: []byte("ok")}, "", false, false, ""},
	} {
		t.Run(row.name, func(t *testing.T) {
			if got := Divergence(row.tok, []byte(row.out), row.mid, row.ours); got != row.want {
				t.Errorf("Divergence = %q, want %q", got, row.want)
			}
		})
	}
}

func TestPick(t *testing.T) {
	toks := []Token{{Piece: []byte("x")}, {End: true}, {Piece: []byte("{")}}
	token := func(id int) Token { return toks[id] }
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[int]bool{}
	for range 200 {
		id, ok := Pick(3, func(id int) bool { return id != 0 }, token, rng)
		if !ok || id == 0 {
			t.Fatalf("Pick = %d, %v: want an allowed token", id, ok)
		}
		seen[id] = true
	}
	if !seen[1] || !seen[2] {
		t.Errorf("Pick over 200 draws took %v, want both the end and the structural token", seen)
	}
	if _, ok := Pick(3, func(int) bool { return false }, token, rng); ok {
		t.Error("Pick with nothing allowed succeeded")
	}
}
