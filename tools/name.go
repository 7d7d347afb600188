package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
)

// checkName reports why name may not be a tool's bare name, or nil.
//
// A name is printable ASCII (U+0020–U+007E) with no space at either end.
// Anything else could let one tool's name pass for another's on a screen
// or in an audit log: a Cyrillic "а" in "trаnsfer_funds", a fullwidth or
// accented letter, an invisible character (zero width space or joiner,
// word joiner, byte order mark), a bidirectional control that reorders
// what is shown, a no-break space, a space at an end. This is the MCP
// specification's rule for tool names (ASCII letters, digits, "_", "-",
// "."), widened to the ASCII punctuation real catalogs use ("/", "&") and
// to inner spaces; no real catalog toolgate was measured on names a tool
// outside ASCII (docs/catalogs.md), and the names shown to a model are
// ASCII anyway ([ModelName]).
//
// The reason quotes the name with every character outside ASCII escaped
// and names the first offending one by its position (1-based, in
// characters) and its Unicode name, so it is printable ASCII itself.
func checkName(name string) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("tool name %+q: %s", name, fmt.Sprintf(format, args...))
	}
	char := 0
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		char++
		switch {
		case r == utf8.RuneError && n <= 1:
			return fail("byte %d is not UTF-8", i+1)
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			return fail("character %d is %U, a control character", char, r)
		case r >= 0x7f:
			return fail("character %d is %U %s, not printable ASCII: it could pass for another tool's name", char, r, runenames.Name(r))
		}
		i += n
	}
	switch {
	case strings.HasPrefix(name, " "):
		return fail("starts with a space: it could pass for %q", strings.TrimSpace(name))
	case strings.HasSuffix(name, " "):
		return fail("ends with a space: it could pass for %q", strings.TrimSpace(name))
	}
	return nil
}
