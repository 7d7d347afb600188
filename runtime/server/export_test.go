package server

// ParseTokenFile exposes parseTokenFile to the tests and the fuzz target.
var ParseTokenFile = parseTokenFile
