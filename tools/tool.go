package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/toolgate/toolgate/internal/jsonsyntax"
)

// Card is a tool's capability card: the short, user-worded text that
// discovery indexes. The full JSON Schema is deliberately not part of it;
// it is fetched only for the shortlist.
type Card struct {
	// Name is the tool's bare name (the part of its ID after the namespace).
	Name string `json:"name"`
	// Summary is one sentence, in the user's words, saying what the tool does.
	Summary string `json:"summary,omitempty"`
	// Scopes are all required to use the tool. Empty means no scope is needed.
	Scopes []string `json:"scopes,omitempty"`
	// Aliases are phrases users say for this capability ("track package").
	Aliases []string `json:"aliases,omitempty"`
	// NotFor says when not to use the tool, naming the sibling to use instead.
	// Discovery never treats it as positive evidence.
	NotFor string `json:"not_for,omitempty"`
	// Tags are free-form keywords.
	Tags []string `json:"tags,omitempty"`
	// Examples are requests in the users' words that need the tool (from a
	// card overlay, tools/cards). Discovery indexes them; they are not card
	// text a model is shown.
	Examples []string `json:"examples,omitempty"`
	// Group is the workflow group the tool belongs to ("payments").
	Group string `json:"group,omitempty"`
	// ReadOnly reports that the tool has no side effects.
	ReadOnly bool `json:"read_only,omitempty"`
	// Irreversible reports that the tool's effect cannot be undone; every
	// call needs a human approval.
	Irreversible bool `json:"irreversible,omitempty"`
	// Idempotent reports that repeating a call with the same arguments has
	// no further effect.
	Idempotent bool `json:"idempotent,omitempty"`
	// OpenWorld reports that the tool's output comes from outside the
	// system (mail, web pages, tickets) and may carry injected instructions.
	OpenWorld bool `json:"open_world,omitempty"`
}

// Handler executes a tool call. args is the validated JSON object of
// arguments. The returned JSON is the tool's result.
//
// A Handler may be called concurrently. It should return a *[DomainError] for
// a business refusal, an error wrapped with [NoEffect] when it failed before
// any side effect, and any other error when the outcome is unknown. The
// context carries the call's deadline and, through the gateway, its
// idempotency key, which a handler should pass downstream.
type Handler func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// Tool is one executable capability in the registry.
type Tool struct {
	// ID is "<namespace>/<name>"; it is unique in a registry.
	ID string `json:"id"`
	// Card is what discovery searches. [Card.Name] must equal the name part of ID.
	Card Card `json:"card"`
	// Title is an optional human-readable display name (MCP "title").
	Title string `json:"title,omitempty"`
	// Description is the tool's full description as its author wrote it (an
	// MCP server's description, say). [Card.Summary] is derived from it when empty.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments object. Nil means an
	// object with no declared properties.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Tenants restricts the tool to these tenants. Empty means every tenant.
	Tenants []string `json:"tenants,omitempty"`
	// Timeout bounds one execution. Zero means the gateway's default.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Handler runs the tool. Nil for catalog-only tools (discovery, eval, lint).
	Handler Handler `json:"-"`
}

// Runnable reports whether the tool can execute: it has a [Handler]. A
// catalog file's tool has none (no server behind it): servers and agents
// do not offer it unless told the catalog is for discovery only, and the
// gateway refuses a call of it (gateway.CodeServerNotConnected).
func (t *Tool) Runnable() bool { return t.Handler != nil }

// Namespace returns the part of the ID before the first slash.
func (t *Tool) Namespace() string {
	ns, _, _ := strings.Cut(t.ID, "/")
	return ns
}

// Name returns the tool's bare name, the part of the ID after the first slash.
func (t *Tool) Name() string {
	if _, name, ok := strings.Cut(t.ID, "/"); ok {
		return name
	}
	return t.ID
}

var namespacePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ErrInvalidTool is wrapped by every error Validate returns.
var ErrInvalidTool = errors.New("tools: invalid tool")

// Validate checks the tool's identity and card: the ID is "<namespace>/<name>"
// with a namespace of letters, digits, '_', '.' and '-' and a name of
// printable ASCII with no space at either end (a name outside ASCII could
// pass for another tool's: a Cyrillic "а", a zero width or bidirectional
// character; the error shows it escaped, with its position);
// [Card.Name] matches the ID; the input schema, when present, is a JSON object.
func (t *Tool) Validate() error { return t.validate(nil) }

// objectSchemas holds input schemas found to be JSON objects, by where
// their bytes are: the tools of one batch from [DefineAll] share one
// slice per schema, so a batch scans each once.
type objectSchemas map[schemaAddr]bool

// schemaAddr is where a schema's bytes are. Two slices with the same
// start and length hold the same bytes while nothing writes them, which
// is so for the schemas of one batch of tools (a catalog's tools share
// one slice per schema): a memo keyed by it needs no hashing of the
// bytes, which cost 60 MB of hashing at 100,000 tools.
type schemaAddr struct {
	p *byte
	n int
}

func addrOf(b []byte) schemaAddr { return schemaAddr{unsafe.SliceData(b), len(b)} }

// validate is Validate, skipping the scan of a schema that objects (when
// not nil) already holds, and adding the ones it scans.
func (t *Tool) validate(objects objectSchemas) error {
	if err := t.validateCard(); err != nil {
		return err
	}
	if len(t.InputSchema) == 0 {
		return nil
	}
	at := addrOf(t.InputSchema)
	if objects[at] {
		return nil
	}
	if !isObjectJSON(t.InputSchema) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t.InputSchema, &obj); err != nil {
			return fmt.Errorf("%w %q: input schema is not a JSON object: %v", ErrInvalidTool, t.ID, err)
		}
	}
	if objects != nil {
		objects[at] = true
	}
	return nil
}

// validateCard is Validate but for the input schema.
func (t *Tool) validateCard() error {
	ns, name, ok := strings.Cut(t.ID, "/")
	nameErr := checkName(name)
	switch {
	case !ok:
		return fmt.Errorf("%w %q: ID must be <namespace>/<name>", ErrInvalidTool, t.ID)
	case !namespacePattern.MatchString(ns):
		return fmt.Errorf("%w %q: namespace %q must match %s", ErrInvalidTool, t.ID, ns, namespacePattern)
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%w %q: name is empty", ErrInvalidTool, t.ID)
	case nameErr != nil:
		return fmt.Errorf("%w %q: %v", ErrInvalidTool, t.ID, nameErr)
	case t.Card.Name != name:
		return fmt.Errorf("%w %q: card name %q differs from the ID's name %q", ErrInvalidTool, t.ID, t.Card.Name, name)
	}
	for _, s := range t.Card.Scopes {
		if s == "" {
			return fmt.Errorf("%w %q: empty scope", ErrInvalidTool, t.ID)
		}
	}
	return nil
}

// isObjectJSON reports whether raw is valid JSON that [json.Unmarshal]
// takes into a map: an object or null. It only scans, where Unmarshal
// would build the map (a registry of 100,000 tools validated each schema
// twice that way, 1.3 s).
func isObjectJSON(raw json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == 'n') && jsonsyntax.Valid(raw)
}

// DomainError is a business refusal from a tool that ran: the request was
// understood and rejected on its merits (insufficient funds, account closed).
// The gateway records it like a success and replays it on retry.
type DomainError struct {
	// Code is a stable, machine-readable reason ("INSUFFICIENT_FUNDS").
	Code string `json:"code"`
	// Message explains the refusal to the model and the user.
	Message string `json:"message"`
	// Details carries structured data about the refusal; it may be nil.
	Details any `json:"details,omitempty"`
}

func (e *DomainError) Error() string { return "tools: " + e.Code + ": " + e.Message }

type noEffectError struct{ err error }

func (e *noEffectError) Error() string { return e.err.Error() }
func (e *noEffectError) Unwrap() error { return e.err }

// NoEffect marks err as a failure that happened before any side effect, so
// the call may safely be executed again. NoEffect(nil) is nil.
func NoEffect(err error) error {
	if err == nil {
		return nil
	}
	return &noEffectError{err: err}
}

// IsNoEffect reports whether err, or an error it wraps, was marked by [NoEffect].
func IsNoEffect(err error) bool {
	var ne *noEffectError
	return errors.As(err, &ne)
}

type unavailableError struct {
	err   error // a *noEffectError
	after time.Duration
}

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// Unavailable marks err as a refusal of a handler whose server is not
// connected now and is being reconnected (an MCP server that dropped):
// nothing ran, as with [NoEffect] (which it implies), and the same call
// may be sent again, after retryAfter when that is positive.
func Unavailable(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return &unavailableError{err: NoEffect(err), after: retryAfter}
}

// UnavailableFor reports whether err, or an error it wraps, was marked by
// [Unavailable], and the retry-after hint it was given.
func UnavailableFor(err error) (retryAfter time.Duration, ok bool) {
	var ue *unavailableError
	if !errors.As(err, &ue) {
		return 0, false
	}
	return ue.after, true
}

// modelNamePattern is the rule names shown to a model must follow (OpenAI's
// function-name rule, which other backends accept too).
var modelNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// maxModelName is the longest name modelNamePattern accepts.
const maxModelName = 64

// ModelName returns the name under which the tool with ID id is shown to a
// model: it always matches ^[a-zA-Z0-9_-]{1,64}$ and is never one for which
// taken reports true. Candidates, in order:
//
//  1. the bare name, with every character outside [a-zA-Z0-9_-] replaced by
//     '_' ("math.factorial" → "math_factorial");
//  2. the sanitized namespace and name joined by "__" ("github__create_issue");
//  3. that, cut to fit 64 bytes with room for "_" and the first 8 hex digits
//     of the SHA-256 of id, then, should even that be taken, a counter.
//
// taken must report the names already handed out (and any other reserved
// names); the caller records each returned name, and maps it back to id
// itself. Calling ModelName over the tools in a fixed order (a Snapshot's ID
// order) therefore gives the same names every time. Nil taken means no name
// is taken.
func ModelName(id string, taken func(string) bool) string {
	if taken == nil {
		taken = func(string) bool { return false }
	}
	ns, name, ok := strings.Cut(id, "/")
	if !ok {
		ns, name = "", id
	}
	bare := sanitizeModelName(name)
	if len(bare) <= maxModelName && !taken(bare) {
		return bare
	}
	full, suffix := fallbackNames(ns, bare, id)
	if len(full) <= maxModelName && !taken(full) {
		return full
	}
	cand := withSuffix(full, suffix)
	for n := 2; taken(cand); n++ {
		cand = withSuffix(full, suffix+strconv.Itoa(n))
	}
	return cand
}

// fallbackNames returns what [ModelName] tries after the bare name
// (sanitized as bare) for the tool with ID id in namespace ns: the
// qualified name, which may be too long to show, and the suffix of its
// hashed names ([withSuffix]). Anyone can compute both from the ID.
func fallbackNames(ns, bare, id string) (full, suffix string) {
	sum := sha256.Sum256([]byte(id))
	return qualifiedName(ns, bare), "_" + hex.EncodeToString(sum[:4])
}

// qualifiedName is the sanitized namespace and bare name joined by "__",
// or bare alone when there is no namespace.
func qualifiedName(ns, bare string) string {
	if ns == "" {
		return bare
	}
	return sanitizeModelName(ns) + "__" + bare
}

// withSuffix returns name cut to leave room for suffix, then suffix.
func withSuffix(name, suffix string) string {
	return name[:min(len(name), maxModelName-len(suffix))] + suffix
}

// sanitizeModelName replaces every byte outside [a-zA-Z0-9_-] by '_' (a
// multi-byte character becomes one '_'); an empty result is "_".
func sanitizeModelName(s string) string {
	clean := s != ""
	for i := 0; clean && i < len(s); i++ {
		c := s[i]
		clean = c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
