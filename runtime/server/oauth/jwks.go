package oauth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/toolgate/toolgate/internal/textcut"
)

// ErrKeySet wraps every error reading a JSON Web Key Set.
var ErrKeySet = errors.New("oauth: invalid key set")

// maxKeys bounds the keys of a set that are read, so that a token
// without "kid" costs a bounded number of signature checks; providers
// publish a handful.
const maxKeys = 100

// minRSABits is the smallest RSA modulus accepted (RFC 7518 §3.3).
const minRSABits = 2048

// key is one usable verification key of a key set.
type key struct {
	kid   string
	alg   Algorithm // the algorithm the key serves
	pub   crypto.PublicKey
	index int // its place in the set, for messages
}

// jwk is the members of a JWK that verification reads (RFC 7517, 7518, 8037).
type jwk struct {
	Kty string   `json:"kty"`
	Kid string   `json:"kid"`
	Use string   `json:"use"`
	Alg string   `json:"alg"`
	Ops []string `json:"key_ops"`
	Crv string   `json:"crv"`
	N   string   `json:"n"`
	E   string   `json:"e"`
	X   string   `json:"x"`
	Y   string   `json:"y"`
	D   string   `json:"d"`
}

// skippedKey is a key of a set that the verifier does not use, and why.
type skippedKey struct {
	index int    // its place in the set's "keys"
	kid   string // "" when it has none (or none that is a string)
	why   string // holds no key material
	// defect is true for a key of a type the verifier reads that is
	// malformed, weak, ambiguous or private (an operator should look),
	// false for a key meant for something else (encryption, another
	// algorithm or curve).
	defect bool
}

func (s skippedKey) String() string {
	return fmt.Sprintf("key %d (kid %q): %s", s.index, textcut.Shorten(s.kid, 64), s.why)
}

// parseKeySet parses a JWK Set and returns the keys that can verify one of
// the algorithms in allowed, and the keys it skipped. A key it cannot use
// is skipped, not fatal, since real providers publish mixed sets: keys
// for other uses ("use":"enc"), other algorithms or curves, types this
// package does not verify (RFC 7517 §5), and keys that are malformed, too
// weak (an RSA modulus under 2048 bits) or published with their private
// part, none of which may verify anything while the others still should.
// Two different keys with one kid serving one algorithm are ambiguous
// (RFC 7517 §4.5): neither is used. Keys after the first maxKeys are
// skipped. Only a set that is not a JSON object with a "keys" array is
// an error.
func parseKeySet(data []byte, allowed []Algorithm) ([]key, []skippedKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrKeySet, err)
	}
	if set.Keys == nil {
		return nil, nil, fmt.Errorf("%w: no \"keys\" array", ErrKeySet)
	}
	var keys []key
	var skipped []skippedKey
	if n := len(set.Keys); n > maxKeys {
		skipped = append(skipped, skippedKey{index: maxKeys, defect: true,
			why: fmt.Sprintf("the set has %d keys; those after the first %d are not read", n, maxKeys)})
		set.Keys = set.Keys[:maxKeys]
	}
	for i, raw := range set.Keys {
		var j jwk
		if err := json.Unmarshal(raw, &j); err != nil {
			var named struct{ Kid any }
			json.Unmarshal(raw, &named)
			kid, _ := named.Kid.(string)
			skipped = append(skipped, skippedKey{index: i, kid: kid, why: "not a JWK: " + err.Error(), defect: true})
			continue
		}
		ks, why, defect := j.keys(allowed)
		if why != "" {
			skipped = append(skipped, skippedKey{index: i, kid: j.Kid, why: why, defect: defect})
			continue
		}
		for _, k := range ks {
			k.index = i
			keys = append(keys, k)
		}
	}
	keys, dups := dropAmbiguous(keys)
	return keys, append(skipped, dups...), nil
}

// dropAmbiguous removes the keys whose kid another, different key has
// for the same algorithm, and reports each such kid once; a key
// published twice is kept once.
func dropAmbiguous(keys []key) ([]key, []skippedKey) {
	type slot struct {
		kid string
		alg Algorithm
	}
	first := map[slot]key{}
	bad := map[slot]bool{}
	var skipped []skippedKey
	out := keys[:0:0]
	for _, k := range keys {
		s := slot{k.kid, k.alg}
		f, seen := first[s]
		switch {
		case k.kid == "" || !seen:
			first[s] = k
			out = append(out, k)
		case f.pub.(interface{ Equal(crypto.PublicKey) bool }).Equal(k.pub):
			// The same key again: one key.
		case !bad[s]:
			bad[s] = true
			skipped = append(skipped, skippedKey{index: k.index, kid: k.kid, defect: true,
				why: fmt.Sprintf("another key of the set has kid %q for %s", textcut.Shorten(k.kid, 64), k.alg)})
		}
	}
	if len(bad) == 0 {
		return out, nil
	}
	return slices.DeleteFunc(out, func(k key) bool { return bad[slot{k.kid, k.alg}] }), skipped
}

// keys converts j to one key per algorithm of allowed it serves: an RSA
// key serves RS256 and PS256, an EC key ES256, an Ed25519 key [EdDSA] and
// Ed25519, and a key whose "alg" names an algorithm serves that one
// only. A key it cannot use yields why (and whether that is a defect).
func (j *jwk) keys(allowed []Algorithm) (keys []key, why string, defect bool) {
	switch {
	case j.Use != "" && j.Use != "sig":
		return nil, fmt.Sprintf("use %q, not sig", textcut.Shorten(j.Use, 32)), false
	case j.Ops != nil && !slices.Contains(j.Ops, "verify"):
		return nil, "key_ops without verify", false
	case j.D != "":
		return nil, "holds private key material", true
	}
	k := key{kid: j.Kid}
	var algs []Algorithm
	switch j.Kty {
	case "RSA":
		algs = []Algorithm{RS256, PS256}
		// RFC 7518 §6.3.1.1 asks for no leading zero octets, and notes
		// that some libraries write one (Java's BigInteger, behind
		// Firebase's and OpenAM's key sets): the integer is the same.
		n, err := b64.DecodeString(j.N)
		n = bytes.TrimLeft(n, "\x00")
		if err != nil || len(n) == 0 {
			return nil, "bad modulus", true
		}
		e, err := b64.DecodeString(j.E)
		e = bytes.TrimLeft(e, "\x00")
		if err != nil || len(e) == 0 || len(e) > 4 {
			return nil, "bad exponent", true
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits {
			return nil, fmt.Sprintf("modulus of %d bits (at least %d)", pub.N.BitLen(), minRSABits), true
		}
		if pub.E < 3 || pub.E%2 == 0 {
			return nil, "bad exponent", true
		}
		k.pub = pub
	case "EC":
		if j.Crv != "P-256" {
			return nil, fmt.Sprintf("curve %q is not P-256", textcut.Shorten(j.Crv, 32)), false
		}
		algs = []Algorithm{ES256}
		x, errX := b64.DecodeString(j.X)
		y, errY := b64.DecodeString(j.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, "bad P-256 point", true
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, "bad P-256 point", true
		}
		k.pub = pub
	case "OKP":
		if j.Crv != "Ed25519" {
			return nil, fmt.Sprintf("curve %q is not Ed25519", textcut.Shorten(j.Crv, 32)), false
		}
		algs = []Algorithm{EdDSA, Ed25519}
		x, err := b64.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, "bad Ed25519 key", true
		}
		k.pub = ed25519.PublicKey(x)
	default:
		return nil, fmt.Sprintf("key type %q is not RSA, EC or OKP", textcut.Shorten(j.Kty, 32)), false
	}
	// A key that names its algorithm serves that one only.
	if j.Alg != "" {
		if !slices.Contains(algs, Algorithm(j.Alg)) {
			return nil, fmt.Sprintf("alg %q is not accepted for a key of type %s", textcut.Shorten(j.Alg, 32), j.Kty), false
		}
		algs = []Algorithm{Algorithm(j.Alg)}
	}
	for _, a := range algs {
		if slices.Contains(allowed, a) {
			k.alg = a
			keys = append(keys, k)
		}
	}
	if keys == nil {
		return nil, fmt.Sprintf("serves %v, none of them accepted", algs), false
	}
	return keys, "", false
}
