package wymcp

import "time"

// SetListenTiming shortens s's listen streams' keep-alive interval and the
// least gap between two of their list_changed frames, for the streams
// opened from now on: the tests' hook (the defaults are tens of seconds
// and a quarter second, internal/transport/listen.go).
func SetListenTiming(s *Server, keepAlive, coalesce time.Duration) {
	s.handler.SetListenTiming(keepAlive, coalesce)
}
