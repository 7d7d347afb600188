package mcpserver

import (
	"context"
	"time"
)

// SetClock sets the clock s reads request states' expiry with.
func SetClock(s *Server, now func() time.Time) { s.now = now }

// SetElicitDeadline sets what bounds s's wait for an answer to an
// elicitation ([context.WithTimeout] with [Options.ElicitTimeout]).
func SetElicitDeadline(s *Server, deadline func(context.Context, time.Duration) (context.Context, context.CancelFunc)) {
	s.elicitDeadline = deadline
}
