package master

import (
	"fmt"
	"testing"
)

func TestRestartReasonsAreFewLabels(t *testing.T) {
	cases := []struct{ reason, want string }{
		{"exited: killed by signal 9 (killed)", "exited"},
		{"exited: exit status 1", "exited"},
		{"not seen for 2.1s", "silent"},
		{fmt.Sprintf("%s of 1m0s (recovering for 1m0.25s)", ReasonRecoveringTooLong), "recovering-too-long"},
		{"something new", "other"},
	}
	for _, c := range cases {
		if got := reasonClass(c.reason); got != c.want {
			t.Errorf("reasonClass(%q) = %q, want %q", c.reason, got, c.want)
		}
	}
}
