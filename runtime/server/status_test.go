package server_test

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/server"
)

func TestStatusCode(t *testing.T) {
	tests := []struct {
		typ  gateway.ErrorType
		want int
	}{
		{gateway.Unauthenticated, 401}, {gateway.PermissionDenied, 403}, {gateway.UnknownTool, 404},
		{gateway.ValidationError, 422}, {gateway.InProgress, 409}, {gateway.IdempotencyMismatch, 422},
		{gateway.ConfirmationRequired, 428}, {gateway.RateLimited, 429}, {gateway.DownstreamFailure, 503},
		{gateway.DomainErrorType, 422}, {gateway.UncertainOutcome, 409}, {server.RequestTooLarge, 413},
		{gateway.NotFound, 404}, {gateway.Internal, 500}, {server.MethodNotAllowed, 405}, {server.NotImplemented, 501},
		{"SOMETHING_NEW", 500},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ), func(t *testing.T) {
			if got := server.StatusCode(tc.typ); got != tc.want {
				t.Errorf("StatusCode(%s) = %d, want %d", tc.typ, got, tc.want)
			}
		})
	}
}
