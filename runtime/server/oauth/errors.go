package oauth

import (
	"errors"
	"fmt"
)

// ErrInvalidToken is wrapped by every refusal of a token; [TokenError]
// carries the reason.
var ErrInvalidToken = errors.New("oauth: invalid token")

// Reason says why a token was refused. Its values are bounded (a metric
// label, a log field) and never hold token or claim text.
type Reason string

// The reasons a Verifier refuses a token.
const (
	// ReasonMalformed: not a JWS compact serialization this package reads
	// (three base64url parts, JSON object header and payload, no "crit").
	ReasonMalformed Reason = "malformed"
	// ReasonAlgorithm: "alg" is not on [Options.Algorithms] ("none" and HS*
	// never are).
	ReasonAlgorithm Reason = "algorithm"
	// ReasonUnknownKey: no key of the issuer's key set has the token's
	// "kid" and algorithm (for a token without "kid": serves its
	// algorithm), even after a refetch (or a refetch was not allowed
	// yet, or failed).
	ReasonUnknownKey Reason = "unknown_key"
	// ReasonSignature: the signature does not verify (with any key
	// serving the algorithm, for a token without "kid").
	ReasonSignature Reason = "signature"
	// ReasonIssuer: "iss" is not [Options.Issuer].
	ReasonIssuer Reason = "issuer"
	// ReasonAudience: "aud" does not contain [Options.Audience].
	ReasonAudience Reason = "audience"
	// ReasonExpired: "exp" is missing, or passed more than [Options.Leeway] ago.
	ReasonExpired Reason = "expired"
	// ReasonNotYetValid: "nbf" or "iat" lies more than [Options.Leeway] ahead.
	ReasonNotYetValid Reason = "not_yet_valid"
	// ReasonClaims: a claim has the wrong type, or the principal or
	// tenant claim is missing or empty.
	ReasonClaims Reason = "claims"
)

// TokenError is a refused token. It wraps [ErrInvalidToken].
type TokenError struct {
	Reason Reason
	// Detail, when set, says more for an operator: how "iss" or "aud"
	// missed the configured value (a trailing slash, letter case), with
	// that value, or which claim has the wrong type or size. Like Reason
	// it never holds token or claim text.
	Detail string
}

func tokenError(r Reason) error { return &TokenError{Reason: r} }

func (e *TokenError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%v: %s (%s)", ErrInvalidToken, e.Reason, e.Detail)
	}
	return fmt.Sprintf("%v: %s", ErrInvalidToken, e.Reason)
}

// Unwrap returns [ErrInvalidToken].
func (e *TokenError) Unwrap() error { return ErrInvalidToken }
