package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/tools"
)

// ErrUnknownToken is returned by [TokenFile.Authenticate] for a token the
// file does not list.
var ErrUnknownToken = errors.New("server: unknown bearer token")

// ErrTokenFile wraps every error loading a token file.
var ErrTokenFile = errors.New("server: invalid token file")

// TokenFile is an [Authenticator] over a static token file (the --tokens
// file of `toolgate serve` and `examples/transfer serve`):
//
//	{"tokens":{"<bearer>":{"principal":"alice","tenant":"acme","scopes":["payments:write"]}}}
//
// Tokens are kept only as sha256 digests, so a lookup's timing reveals
// nothing useful about a token. It is immutable and safe for concurrent use.
type TokenFile struct {
	byDigest map[[32]byte]tools.Principal
}

var _ Authenticator = (*TokenFile)(nil)

// LoadTokenFile reads and parses the token file at path. Invalid JSON
// (invalid UTF-8 and lone surrogates included), a member given twice at
// any level (a token listed twice, or an entry with two "scopes"), unknown
// members, a token no request can present (blank, or holding whitespace
// or a control character), entries without principal or tenant, a
// principal or tenant holding a control character, a scope that is blank
// or holds whitespace or a control character, and a file listing no token
// are errors that read "PATH:LINE: reason" (for a token, the line of its key),
// name the principal, never a token, and wrap [ErrTokenFile].
func LoadTokenFile(path string) (*TokenFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	f, err := parseTokenFile(data)
	if err != nil {
		var le *tokenFileError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%w: %s:%d: %s", ErrTokenFile, path, le.line, le.reason)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// maxTokenFileBytes bounds a token file.
const maxTokenFileBytes = 16 << 20

// tokenFileError is a token file problem on a line.
type tokenFileError struct {
	line   int
	reason string
}

func (e *tokenFileError) Error() string {
	return fmt.Sprintf("%v: line %d: %s", ErrTokenFile, e.line, e.reason)
}

func (e *tokenFileError) Unwrap() error { return ErrTokenFile }

// parseTokenFile parses a token file as [LoadTokenFile] says; its errors
// name the line ("line 3: reason", wrapping [ErrTokenFile]).
func parseTokenFile(data []byte) (*TokenFile, error) {
	if len(data) > maxTokenFileBytes {
		return nil, &tokenFileError{line: 1, reason: fmt.Sprintf("the file is larger than %d bytes", maxTokenFileBytes)}
	}
	// Syntax, UTF-8 and escapes first; the walk below reports duplicates
	// without naming the member (which may be a token).
	if err := jcs.Check(data); err != nil {
		var se *jcs.SyntaxError
		switch {
		case !errors.As(err, &se):
			return nil, &tokenFileError{line: 1, reason: "invalid JSON"}
		case !se.Duplicate:
			return nil, &tokenFileError{line: lineOf(data, se.Offset), reason: "invalid JSON: " + se.Msg}
		}
	}
	w := tokenWalker{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	f := &TokenFile{byDigest: map[[32]byte]tools.Principal{}}
	if err := w.file(f); err != nil {
		return nil, err
	}
	return f, nil
}

// tokenWalker reads a token file token by token, so that every error has
// its line and no member can be given twice.
type tokenWalker struct {
	dec  *json.Decoder
	data []byte
}

func lineOf(data []byte, offset int) int {
	offset = min(max(offset, 0), len(data))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

func (w *tokenWalker) errorf(format string, args ...any) error {
	return &tokenFileError{line: lineOf(w.data, int(w.dec.InputOffset())), reason: fmt.Sprintf(format, args...)}
}

// members reads an object, calling member for each name (the decoder is
// then at its value); a name given twice is an error that does not repeat
// it when secret.
func (w *tokenWalker) members(what string, secret bool, member func(name string) error) error {
	tok, err := w.dec.Token()
	if err != nil {
		return w.errorf("invalid JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return w.errorf("%s must be an object", what)
	}
	seen := map[string]int{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return w.errorf("invalid JSON")
		}
		name := tok.(string)
		line := lineOf(w.data, int(w.dec.InputOffset()))
		if first, dup := seen[name]; dup {
			if secret {
				return w.errorf("a token is listed twice (first on line %d)", first)
			}
			return w.errorf("%s has member %q twice (first on line %d)", what, name, first)
		}
		seen[name] = line
		if err := member(name); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return w.errorf("invalid JSON")
	}
	return nil
}

func (w *tokenWalker) file(f *TokenFile) error {
	hasTokens, tokensLine := false, 0
	err := w.members("the file", false, func(name string) error {
		if name != "tokens" {
			return w.errorf("unknown member %q (want \"tokens\")", textcut.Prefix(name, 64))
		}
		hasTokens = true
		tokensLine = lineOf(w.data, int(w.dec.InputOffset()))
		return w.members("\"tokens\"", true, func(bearer string) error {
			line := lineOf(w.data, int(w.dec.InputOffset()))
			p, err := w.entry()
			if err != nil {
				return err
			}
			switch why := unusableToken(bearer); {
			case why != "":
				return &tokenFileError{line: line, reason: fmt.Sprintf("principal %q has %s (a bearer token is one word of visible characters)", p.ID, why)}
			case p.ID == "" || p.Tenant == "":
				return &tokenFileError{line: line, reason: fmt.Sprintf("token entry (principal %q) needs a principal and a tenant", p.ID)}
			}
			f.byDigest[sha256.Sum256([]byte(bearer))] = p
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !hasTokens {
		return w.errorf("no \"tokens\" object")
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return w.errorf("data after the object")
	}
	if len(f.byDigest) == 0 {
		// A server no request could authenticate to.
		return &tokenFileError{line: tokensLine, reason: "\"tokens\" lists no token, so no request could authenticate"}
	}
	return nil
}

// unusableToken says why no request can present bearer, or returns "".
// An Authorization header's value is trimmed and a bearer token (RFC 6750
// b64token) is one word, so a token that is blank or holds whitespace can
// never match; one with a control character could not be sent as a header
// (and would reach a terminal if ever printed).
func unusableToken(bearer string) string { return notOneWord("token", bearer) }

// notOneWord says why s is not one word of visible characters, calling it
// a what ("an empty token", "a scope with whitespace"), or returns "".
func notOneWord(what, s string) string {
	if strings.TrimSpace(s) == "" {
		return "an empty " + what
	}
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			return "a " + what + " with whitespace"
		case unicode.IsControl(r):
			return "a " + what + " with a control character"
		}
	}
	return ""
}

// entry reads {"principal","tenant","scopes"}. A scope no token can carry
// (blank, or holding whitespace, which separates OAuth's scopes, or a
// control character) is refused on the line of "scopes", naming the
// principal wherever the entry gives it.
func (w *tokenWalker) entry() (tools.Principal, error) {
	var p tools.Principal
	scopesLine := 0
	err := w.members("a token entry", false, func(name string) error {
		switch name {
		case "principal", "tenant":
			var s string
			if err := w.dec.Decode(&s); err != nil {
				return w.errorf("%q must be a string", name)
			}
			if strings.ContainsFunc(s, unicode.IsControl) {
				// "\u0000", "\n": the gateway refuses such a principal
				// (no store keys a record by a NUL; one may join names
				// with a control character).
				return w.errorf("%q holds a control character", name)
			}
			if name == "principal" {
				p.ID = s
			} else {
				p.Tenant = s
			}
		case "scopes":
			scopesLine = lineOf(w.data, int(w.dec.InputOffset()))
			var scopes []string
			if err := w.dec.Decode(&scopes); err != nil {
				return w.errorf("\"scopes\" must be an array of strings")
			}
			p.Scopes = scopes
		default:
			return w.errorf("unknown member %q in a token entry (want principal, tenant, scopes)", textcut.Prefix(name, 64))
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	for _, sc := range p.Scopes {
		if why := notOneWord("scope", sc); why != "" {
			return p, &tokenFileError{line: scopesLine, reason: fmt.Sprintf("principal %q has %s", p.ID, why)}
		}
	}
	return p, nil
}

// Authenticate implements [Authenticator]. The returned principal's Scopes
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
