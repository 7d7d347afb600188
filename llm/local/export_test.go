package local

// VocabOnlyGGUF is vocabOnlyGGUF for the package's external tests.
var VocabOnlyGGUF = vocabOnlyGGUF
