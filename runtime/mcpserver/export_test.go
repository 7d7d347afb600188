package mcpserver

import "time"

// SetClock sets the clock s reads request states' expiry with.
func SetClock(s *Server, now func() time.Time) { s.now = now }
