//go:build race

package strictjson

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back on purpose, so pooled Lexers are made anew and allocation counts
// say nothing.
const raceEnabled = true
