// Package errorid makes the IDs that tie an error a client sees to the log
// entry that holds what went wrong inside: "err_" and 16 hex digits. The
// gateway and the HTTP API give one with every INTERNAL_ERROR, so that the
// text of a store's or a handler's failure stays in the log.
package errorid

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a fresh random ID, err_ and 16 lowercase hex digits.
func New() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "err_" + hex.EncodeToString(b[:])
}
