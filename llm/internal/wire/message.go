package wire

import (
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/termtext"
)

// MaxMessageBytes bounds a server's error message kept in an
// *[llm.StatusError]: enough for any explanation a server writes, and a
// server that sends a megabyte of text (or echoes the whole request) does
// not carry it into logs and errors.
const MaxMessageBytes = 1024

// ServerMessage returns msg, a server's own text, for an error message:
// trimmed, on one line with every control and reordering character
// escaped ([termtext.Line]), and cut at a character boundary near
// [MaxMessageBytes] with "…" where it was longer.
func ServerMessage(msg string) string {
	msg = termtext.Line(strings.TrimSpace(msg))
	if len(msg) <= MaxMessageBytes {
		return msg
	}
	cut := MaxMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}
