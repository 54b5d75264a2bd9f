package main

import (
	"strings"
	"testing"
)

// TestCommandLine checks soak's exit statuses before it builds or runs
// anything: -h is the usage and 0, a bad command line 2, with the flag
// package's message and no "FAIL" line.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"help", []string{"-h"}, 0, "Usage of soak:\n"},
		{"unknown flag", []string{"-bogus"}, 2, "flag provided but not defined: -bogus\nUsage of soak:\n"},
		{"zero duration", []string{"-d", "0s"}, 2, "soak: -d, -c and -sample must be positive\n"},
		{"stray argument", []string{"run"}, 2, "soak: unexpected arguments: [\"run\"]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			code := exitCode(soak(tt.args, &stderr), &stderr)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
			if !strings.HasPrefix(stderr.String(), tt.msg) {
				t.Errorf("stderr = %q, want it to start with %q", stderr.String(), tt.msg)
			}
			if strings.Contains(stderr.String(), "FAIL") {
				t.Errorf("stderr = %q: a command-line answer is no failed soak", stderr.String())
			}
		})
	}
}
