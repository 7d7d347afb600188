package gateway

import "context"

// Check makes the checks Execute makes before it claims a slot — an
// authenticated principal, authorization on the current snapshot, and
// validation (JSON Schema, then the tool's Validator) — and nothing else:
// no rate limit, no claim, no handler, no audit, no metrics. It returns nil
// or the *Error Execute would return, except for a call whose tool has
// gone, which Check refuses as UNKNOWN_TOOL without reading the store,
// where Execute answers a re-sent call from its record. An agent loop uses it to send a
// model's malformed call back for repair before it becomes a step;
// Execute still checks everything again. Safe for concurrent use.
func (g *Gateway) Check(ctx context.Context, call Call) error {
	t, _, _, gerr := admit(g.reg.Snapshot(), call)
	if gerr == nil {
		_, gerr = g.validate(ctx, call, t)
	}
	if gerr != nil {
		return gerr
	}
	return nil
}
