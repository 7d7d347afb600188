package mcpserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
)

// heldState is the request state of a call held for approval: what the
// client echoes back (requestState) to resume it. It names the gateway
// slot the call was held in (SessionID, Step), so the resumed call is the
// same call to the gateway (its derived idempotency key), and binds it to
// the requester, the tool and the canonical arguments: the resumed request
// must match all three.
type heldState struct {
	Version   int    `json:"v"`
	Tenant    string `json:"t"`
	Principal string `json:"p"`
	Tool      string `json:"tool"`
	Args      string `json:"args"` // hex SHA-256 of the arguments' RFC 8785 (JCS) form
	SessionID string `json:"s"`
	Step      int    `json:"n"`
	Approval  string `json:"a"`
	Expires   int64  `json:"exp"` // Unix seconds
}

// maxStateBytes bounds a request state a client sends back: a state this
// server signed is a few hundred bytes.
const maxStateBytes = 2048

// Errors of openState, each wrapped with what was wrong.
var (
	// ErrStateInvalid is a request state this server did not sign as it
	// is: malformed, too long, or altered.
	ErrStateInvalid = errors.New("mcpserver: invalid request state")
	// ErrStateExpired is a request state past its expiry.
	ErrStateExpired = errors.New("mcpserver: request state expired")
	// ErrStateMismatch is a request state for another principal, tool or
	// arguments than the request that carries it.
	ErrStateMismatch = errors.New("mcpserver: request state does not match the call")
)

// argsDigest is the hex SHA-256 of args' RFC 8785 form: the same
// arguments written with other spacing or member order digest alike; any
// changed value does not.
func argsDigest(args json.RawMessage) (string, error) {
	canon, err := jcs.Canonicalize(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// sealState returns st signed with key: base64url(JSON) "." base64url(HMAC-SHA256).
func sealState(key []byte, st heldState) string {
	payload, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, key)
	mac.Write(payload)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(mac.Sum(nil))
}

// openState verifies a request state against key and now: its signature
// (in constant time) before anything in it is read, then its expiry.
func openState(key []byte, s string, now time.Time) (heldState, error) {
	var st heldState
	if len(s) > maxStateBytes {
		return st, fmt.Errorf("%w: longer than %d bytes", ErrStateInvalid, maxStateBytes)
	}
	body, sig, ok := strings.Cut(s, ".")
	if !ok {
		return st, fmt.Errorf("%w: not payload.signature", ErrStateInvalid)
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(body)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("%w: not base64url", ErrStateInvalid)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(payload)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return st, fmt.Errorf("%w: the signature does not match (altered, or signed with another server key)", ErrStateInvalid)
	}
	if err := jcs.Unmarshal(payload, &st); err != nil || st.Version != 1 {
		return heldState{}, fmt.Errorf("%w: unreadable payload", ErrStateInvalid)
	}
	if now.Unix() >= st.Expires {
		return st, fmt.Errorf("%w at %s; send the call again, without requestState, for a new approval",
			ErrStateExpired, time.Unix(st.Expires, 0).UTC().Format(time.RFC3339))
	}
	return st, nil
}

// matches checks that a verified state was issued for this call: the same
// principal, tool and canonical arguments.
func (st heldState) matches(p tools.Principal, tool string, args json.RawMessage) error {
	switch digest, err := argsDigest(args); {
	case st.Tenant != p.Tenant || st.Principal != p.ID:
		return fmt.Errorf("%w: it was issued to another principal", ErrStateMismatch)
	case st.Tool != tool:
		return fmt.Errorf("%w: it was issued for tool %s", ErrStateMismatch, st.Tool)
	case err != nil || digest != st.Args:
		return fmt.Errorf("%w: the arguments changed since the approval was asked for; an approval holds for the arguments it names only (send the call again, without requestState, to ask for a new one)", ErrStateMismatch)
	}
	return nil
}
