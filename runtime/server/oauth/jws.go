package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"strings"

	"github.com/toolgate/toolgate/internal/jcs"
)

// Algorithm is a JWS "alg" value.
type Algorithm string

// The algorithms a Verifier can accept. "none" and the HMAC algorithms are
// deliberately absent: a resource server holds no shared secret, and
// accepting HS256 with a public key as the secret is the classic forgery.
const (
	RS256 Algorithm = "RS256"
	PS256 Algorithm = "PS256"
	ES256 Algorithm = "ES256"
	EdDSA Algorithm = "EdDSA"
	// Ed25519 is [EdDSA] on Ed25519 by its fully-specified name (RFC 9864,
	// which deprecates the polymorphic [EdDSA]).
	Ed25519 Algorithm = "Ed25519"
)

// MaxTokenBytes bounds the bearer tokens a Verifier parses.
const MaxTokenBytes = 16 << 10

// jws is a parsed JWS compact serialization, not yet verified.
type jws struct {
	alg       Algorithm
	kid       string
	signed    string // header.payload, the signing input
	signature []byte
	claims    map[string]any
}

// b64 is base64url without padding, strict about trailing bits, as RFC
// 7515 requires.
var b64 = base64.RawURLEncoding.Strict()

// parseJWS splits and decodes a compact JWS. It checks the form only:
// three base64url parts, a header naming an algorithm and no critical
// extension, and a payload that is a JSON object without duplicate members.
func parseJWS(token string) (*jws, error) {
	if len(token) > MaxTokenBytes {
		return nil, tokenError(ReasonMalformed)
	}
	h, rest, ok1 := strings.Cut(token, ".")
	p, s, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s, ".") {
		return nil, tokenError(ReasonMalformed)
	}
	hdr, err := decodeObject(h)
	if err != nil {
		return nil, tokenError(ReasonMalformed)
	}
	claims, err := decodeObject(p)
	if err != nil {
		return nil, tokenError(ReasonMalformed)
	}
	sig, err := b64.DecodeString(s)
	if err != nil {
		return nil, tokenError(ReasonMalformed)
	}
	t := &jws{signed: token[:len(h)+1+len(p)], signature: sig, claims: claims}
	alg, _ := hdr["alg"].(string)
	t.alg = Algorithm(alg)
	if kid, ok := hdr["kid"]; ok {
		if t.kid, ok = kid.(string); !ok {
			return nil, tokenError(ReasonMalformed)
		}
	}
	// A critical extension we do not implement must be refused (RFC 7515
	// §4.1.11); we implement none. A key carried in the token itself
	// ("jwk", "jku", "x5u", "x5c") is never trusted: the key set is the
	// issuer's, fetched from a configured place.
	if _, ok := hdr["crit"]; ok {
		return nil, tokenError(ReasonMalformed)
	}
	// "typ" is a media type, compared without case and with
	// "application/" optional (RFC 7515 §4.1.9): JWT, or at+jwt (RFC 9068).
	if typ, ok := hdr["typ"]; ok {
		s, _ := typ.(string)
		switch strings.TrimPrefix(strings.ToLower(s), "application/") {
		case "jwt", "at+jwt":
		default:
			return nil, tokenError(ReasonMalformed)
		}
	}
	return t, nil
}

// decodeObject decodes one base64url part holding a JSON object.
func decodeObject(part string) (map[string]any, error) {
	data, err := b64.DecodeString(part)
	if err != nil {
		return nil, err
	}
	v, err := jcs.Parse(data)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return obj, nil
}

// verifySignature checks t's signature with key, which must be of the
// type t.alg names.
func verifySignature(t *jws, key crypto.PublicKey) bool {
	sum := sha256.Sum256([]byte(t.signed))
	switch t.alg {
	case RS256:
		k, ok := key.(*rsa.PublicKey)
		return ok && rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], t.signature) == nil
	case PS256:
		// RFC 7518 §3.5: MGF1 with SHA-256, a salt as long as the hash.
		k, ok := key.(*rsa.PublicKey)
		return ok && rsa.VerifyPSS(k, crypto.SHA256, sum[:], t.signature, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
	case ES256:
		k, ok := key.(*ecdsa.PublicKey)
		// JWS carries R||S, 32 bytes each for P-256 (RFC 7518 §3.4), not ASN.1.
		if !ok || len(t.signature) != 64 {
			return false
		}
		r := new(big.Int).SetBytes(t.signature[:32])
		s := new(big.Int).SetBytes(t.signature[32:])
		return ecdsa.Verify(k, sum[:], r, s)
	case EdDSA, Ed25519:
		k, ok := key.(ed25519.PublicKey)
		return ok && ed25519.Verify(k, []byte(t.signed), t.signature)
	}
	return false
}

type constError string

func (e constError) Error() string { return string(e) }

const errNotObject = constError("oauth: not a JSON object")
