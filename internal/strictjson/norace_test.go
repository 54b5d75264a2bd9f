//go:build !race

package strictjson

// raceEnabled: see race_test.go.
const raceEnabled = false
