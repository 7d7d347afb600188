package gateway

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"
)

// keyDomain separates the key's hash from every other sha256 toolgate takes.
const keyDomain = "toolgate/idempotency-key/v1"

// DeriveKey returns the idempotency key of docs/design.md invariant 3: the
// lowercase hex sha256 over the length-prefixed (8-byte big-endian length,
// then bytes) fields tenant, principal, session id, step (decimal), tool
// name and canonical, in that order, after a domain-separation prefix.
// canonical must be the RFC 8785 form of the validated arguments. tool is
// the tool's ID (namespace/name), so two namespaces' same-named tools never
// share keys. It is a pure function; Execute uses it, and so may a
// downstream that wants to recompute a key.
func DeriveKey(tenant, principal, sessionID string, step int, tool string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(keyDomain))
	writeField(h, []byte(tenant))
	writeField(h, []byte(principal))
	writeField(h, []byte(sessionID))
	writeField(h, strconv.AppendInt(nil, int64(step), 10))
	writeField(h, []byte(tool))
	writeField(h, canonical)
	var sum [sha256.Size]byte
	return hexString(h.Sum(sum[:0]))
}

// writeField writes b to h length-prefixed: its length as 8 bytes
// big-endian, then its bytes, so that no two field lists hash alike.
func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// fingerprint returns the lowercase hex sha256 of canonical arguments: the
// argument binding of a slot and of an approval.
func fingerprint(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hexString(sum[:])
}

// hexString is [hex.EncodeToString] with one allocation instead of two.
func hexString(b []byte) string {
	var buf [2 * sha256.Size]byte
	return string(hex.AppendEncode(buf[:0], b))
}
