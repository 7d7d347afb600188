package server

import (
	"net/http"

	"github.com/toolgate/toolgate/runtime/gateway"
)

// The error types only the HTTP API answers with; the gateway itself never
// returns them. They share the contract's error body with the gateway's
// [gateway.ErrorType] values.
const (
	// RequestTooLarge: the body exceeds [HandlerOptions.MaxBodyBytes] (HTTP 413).
	RequestTooLarge gateway.ErrorType = "REQUEST_TOO_LARGE"
	// MethodNotAllowed: the HTTP method is wrong for the path (HTTP 405).
	MethodNotAllowed gateway.ErrorType = "METHOD_NOT_ALLOWED"
	// NotImplemented: the endpoint has no backing hook, e.g. /v1/discover
	// without [HandlerOptions.Discover] (HTTP 501).
	NotImplemented gateway.ErrorType = "NOT_IMPLEMENTED"
)

// StatusCode returns the HTTP status code of docs/design.md's contract for
// an error type, and 500 for a type it does not know.
func StatusCode(t gateway.ErrorType) int {
	switch t {
	case gateway.Unauthenticated:
		return http.StatusUnauthorized
	case gateway.PermissionDenied:
		return http.StatusForbidden
	case gateway.UnknownTool, gateway.NotFound:
		return http.StatusNotFound
	case gateway.ValidationError, gateway.IdempotencyMismatch, gateway.DomainErrorType:
		return http.StatusUnprocessableEntity
	case gateway.InProgress, gateway.UncertainOutcome:
		return http.StatusConflict
	case gateway.ConfirmationRequired:
		return http.StatusPreconditionRequired
	case gateway.RateLimited:
		return http.StatusTooManyRequests
	case gateway.DownstreamFailure:
		return http.StatusServiceUnavailable
	case RequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case NotImplemented:
		return http.StatusNotImplemented
	default:
		return http.StatusInternalServerError
	}
}
