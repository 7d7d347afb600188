package grammar

import "flag"

// update rewrites the golden files under testdata instead of comparing with
// them (go test ./grammar -run Golden -update). Every golden test in package
// grammar shares it.
var update = flag.Bool("update", false, "rewrite the golden files under testdata")
