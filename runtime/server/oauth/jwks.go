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
)

// ErrKeySet wraps every error reading a JSON Web Key Set.
var ErrKeySet = errors.New("oauth: invalid key set")

// minRSABits is the smallest RSA modulus accepted (RFC 7518 §3.3).
const minRSABits = 2048

// key is one usable verification key of a key set.
type key struct {
	kid string
	alg Algorithm // the algorithm the key serves
	pub crypto.PublicKey
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

// parseKeySet parses a JWK Set and returns the keys that can verify one of
// the algorithms in allowed. Keys for other uses ("use":"enc"), other
// algorithms, or types this package does not verify are skipped, as RFC
// 7517 §5 allows; a key of a known type that is malformed (a point off
// its curve, a short RSA modulus, private material) is an error, since it
// means the set is not what the operator thinks.
func parseKeySet(data []byte, allowed []Algorithm) ([]key, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySet, err)
	}
	if set.Keys == nil {
		return nil, fmt.Errorf("%w: no \"keys\" array", ErrKeySet)
	}
	var keys []key
	for i, raw := range set.Keys {
		var j jwk
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("%w: key %d: %v", ErrKeySet, i, err)
		}
		if j.Use != "" && j.Use != "sig" {
			continue
		}
		if j.Ops != nil && !slices.Contains(j.Ops, "verify") {
			continue
		}
		ks, err := j.keys()
		if err != nil {
			return nil, fmt.Errorf("%w: key %d (kid %q): %v", ErrKeySet, i, truncate(j.Kid, 64), err)
		}
		for _, k := range ks {
			if slices.Contains(allowed, k.alg) {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}

// keys converts j to one key per algorithm it serves: an RSA key serves
// RS256 and PS256, an EC key ES256, an Ed25519 key EdDSA and Ed25519,
// and a key whose "alg" names an algorithm serves that one only. None
// without error means a key type or algorithm this package does not
// verify.
func (j *jwk) keys() ([]key, error) {
	if j.D != "" {
		return nil, errors.New("holds private key material")
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
			return nil, errors.New("bad modulus")
		}
		e, err := b64.DecodeString(j.E)
		e = bytes.TrimLeft(e, "\x00")
		if err != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("bad exponent")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("modulus of %d bits (at least %d)", pub.N.BitLen(), minRSABits)
		}
		if pub.E < 3 || pub.E%2 == 0 {
			return nil, errors.New("bad exponent")
		}
		k.pub = pub
	case "EC":
		if j.Crv != "P-256" {
			return nil, nil
		}
		algs = []Algorithm{ES256}
		x, errX := b64.DecodeString(j.X)
		y, errY := b64.DecodeString(j.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, errors.New("bad P-256 point")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, errors.New("bad P-256 point")
		}
		k.pub = pub
	case "OKP":
		if j.Crv != "Ed25519" {
			return nil, nil
		}
		algs = []Algorithm{EdDSA, Ed25519}
		x, err := b64.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("bad Ed25519 key")
		}
		k.pub = ed25519.PublicKey(x)
	default:
		return nil, nil
	}
	// A key that names its algorithm serves that one only.
	if j.Alg != "" {
		if !slices.Contains(algs, Algorithm(j.Alg)) {
			return nil, nil
		}
		algs = []Algorithm{Algorithm(j.Alg)}
	}
	var keys []key
	for _, a := range algs {
		k.alg = a
		keys = append(keys, k)
	}
	return keys, nil
}

// truncate shortens s to at most n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
