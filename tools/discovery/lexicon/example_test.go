package lexicon_test

import (
	"fmt"

	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

func ExampleLexicon_Translate() {
	l := lexicon.Default()
	fmt.Println(l.Translate("es", "borrar"), l.Translate("pl", "wyślij"))
	// Output: [delete erase remove] [send]
}

func ExampleLexicon_Expand() {
	l := lexicon.Default()
	fmt.Println(l.Expand(nil, []string{"borrar", "archivos"}, "es"))
	// Output: [delete erase remove files]
}
