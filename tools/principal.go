package tools

import (
	"errors"
	"fmt"
	"slices"
)

// Principal is the caller a turn or a call acts for.
type Principal struct {
	// ID identifies the user or service. It must not be empty.
	ID string `json:"principal"`
	// Tenant isolates customers from each other. It must not be empty.
	Tenant string `json:"tenant"`
	// Scopes are the permissions the principal holds.
	Scopes []string `json:"scopes,omitempty"`
}

// HasScope reports whether p holds scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Authorization failures. Authorize wraps exactly one of them.
var (
	ErrUnauthenticated = errors.New("tools: no principal")
	ErrMissingScope    = errors.New("tools: missing scope")
	ErrWrongTenant     = errors.New("tools: tool not available to tenant")
)

// Authorize is the one authorization decision toolgate makes, used both to
// build a [View] before discovery and by the gateway before every call: deny
// by default, every scope of the tool required, and the principal's tenant
// among the tool's tenants when the tool names any. It returns nil when p may
// use t, else an error wrapping [ErrUnauthenticated], [ErrMissingScope] or
// [ErrWrongTenant] that names what is missing.
func Authorize(p Principal, t *Tool) error {
	if p.ID == "" || p.Tenant == "" {
		return ErrUnauthenticated
	}
	if len(t.Tenants) > 0 && !slices.Contains(t.Tenants, p.Tenant) {
		return fmt.Errorf("%w: %s is not available to tenant %q", ErrWrongTenant, t.ID, p.Tenant)
	}
	for _, s := range t.Card.Scopes {
		if !p.HasScope(s) {
			return fmt.Errorf("%w: %s needs %q", ErrMissingScope, t.ID, s)
		}
	}
	return nil
}
