package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/toolgate/toolgate/tools"
)

// ErrUnknownToken is returned by TokenFile.Authenticate for a token the
// file does not list.
var ErrUnknownToken = errors.New("gateway: unknown bearer token")

// ErrTokenFile wraps every error loading a token file.
var ErrTokenFile = errors.New("gateway: invalid token file")

// TokenFile is an Authenticator over a static token file (the --tokens file
// of `examples/transfer serve`):
//
//	{"tokens":{"<bearer>":{"principal":"alice","tenant":"acme","scopes":["payments:write"]}}}
//
// Tokens are kept only as sha256 digests, so a lookup's timing reveals
// nothing useful about a token. It is immutable and safe for concurrent use.
type TokenFile struct {
	byDigest map[[32]byte]tools.Principal
}

var _ Authenticator = (*TokenFile)(nil)

// LoadTokenFile reads and parses the token file at path.
func LoadTokenFile(path string) (*TokenFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	f, err := ParseTokenFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// ParseTokenFile parses a token file. Unknown members, empty tokens,
// entries without principal or tenant, and empty scopes are errors; an
// error names the principal, never the token.
func ParseTokenFile(data []byte) (*TokenFile, error) {
	var doc struct {
		Tokens map[string]struct {
			Principal string   `json:"principal"`
			Tenant    string   `json:"tenant"`
			Scopes    []string `json:"scopes"`
		} `json:"tokens"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	if doc.Tokens == nil {
		return nil, fmt.Errorf("%w: no \"tokens\" object", ErrTokenFile)
	}
	tokens := make([]string, 0, len(doc.Tokens))
	for tok := range doc.Tokens {
		tokens = append(tokens, tok)
	}
	sort.Strings(tokens)
	f := &TokenFile{byDigest: make(map[[32]byte]tools.Principal, len(tokens))}
	for i, tok := range tokens {
		e := doc.Tokens[tok]
		switch {
		case tok == "":
			return nil, fmt.Errorf("%w: entry for principal %q has an empty token", ErrTokenFile, e.Principal)
		case e.Principal == "" || e.Tenant == "":
			return nil, fmt.Errorf("%w: token entry %d (principal %q) needs a principal and a tenant", ErrTokenFile, i+1, e.Principal)
		}
		for _, s := range e.Scopes {
			if s == "" {
				return nil, fmt.Errorf("%w: principal %q has an empty scope", ErrTokenFile, e.Principal)
			}
		}
		f.byDigest[sha256.Sum256([]byte(tok))] = tools.Principal{ID: e.Principal, Tenant: e.Tenant, Scopes: append([]string(nil), e.Scopes...)}
	}
	return f, nil
}

// Authenticate implements Authenticator. The returned principal's Scopes
// are a copy the caller owns.
func (f *TokenFile) Authenticate(_ context.Context, bearer string) (tools.Principal, error) {
	p, ok := f.byDigest[sha256.Sum256([]byte(bearer))]
	if !ok {
		return tools.Principal{}, ErrUnknownToken
	}
	p.Scopes = append([]string(nil), p.Scopes...)
	return p, nil
}

// Len returns the number of tokens.
func (f *TokenFile) Len() int { return len(f.byDigest) }
