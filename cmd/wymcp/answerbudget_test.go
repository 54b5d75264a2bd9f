package main

import (
	"io"
	"testing"
)

// TestAnswerBudgetFlag: -answer-budget reaches Options.AnswerBudget, and
// its default is the library's (0).
func TestAnswerBudgetFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want int64
	}{{nil, 0}, {[]string{"-answer-budget", "1048576"}, 1 << 20}, {[]string{"-answer-budget", "-1"}, -1}} {
		c, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if c.opts.AnswerBudget != tc.want {
			t.Errorf("%q: AnswerBudget %d, want %d", tc.args, c.opts.AnswerBudget, tc.want)
		}
	}
}
