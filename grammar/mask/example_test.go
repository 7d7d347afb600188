package mask_test

import (
	"fmt"
	"log"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/mask"
)

func Example() {
	g, err := gbnf.Parse(`root ::= "{\"ok\":" ("true" | "false") "}"`)
	if err != nil {
		log.Fatal(err)
	}
	// A model's vocabulary (mask.ReadGGUF reads a real one from the model file):
	// the bytes of each token by id, and which tokens end the generation.
	pieces := [][]byte{[]byte(`{"`), []byte(`ok`), []byte(`":`), []byte(`tr`), []byte(`ue`), []byte(`}`), []byte(`</s>`)}
	kinds := []mask.Kind{mask.KindText, mask.KindText, mask.KindText, mask.KindText, mask.KindText, mask.KindText, mask.KindEnd}
	vocab, err := mask.NewVocabulary(pieces, kinds)
	if err != nil {
		log.Fatal(err)
	}
	eng, err := mask.NewEngine(g, vocab, nil) // once per grammar; safe for concurrent use
	if err != nil {
		log.Fatal(err)
	}
	s := eng.NewSession() // once per generation
	allowed := mask.NewBitset(vocab.Len())
	for !s.Ended() {
		s.Fill(allowed) // a sampler sets the logits of the other tokens to -Inf
		id := 0
		for !allowed.Has(id) { // stands in for sampling from the masked logits
			id++
		}
		if err := s.Accept(id); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%s\n", s.Output())
	// Output: {"ok":true}
}
