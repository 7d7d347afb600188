package tools

import "context"

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns a context carrying the idempotency key of the
// call a handler is executing. The gateway sets it before running a handler
// (tests of a handler may call it directly); handlers read it with
// [IdempotencyKey], without importing the gateway, and pass it downstream (a ledger, an API that takes
// idempotency keys, an upstream MCP server's _meta) so that a re-run of an
// uncertain call is deduplicated there.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

// IdempotencyKey returns the key set by [WithIdempotencyKey], if any. It is
// the same on every re-run of the same call.
func IdempotencyKey(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(idempotencyKeyCtx{}).(string)
	return k, ok && k != ""
}
