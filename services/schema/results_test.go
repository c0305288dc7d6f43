package schema

import (
	"slices"
	"testing"
)

func TestResultFileNames(t *testing.T) {
	want := []string{"q1.csv", "q2.csv", "q3.csv", "q4.csv"}
	if !slices.Equal(ResultFiles, want) {
		t.Errorf("ResultFiles = %q, want %q", ResultFiles, want)
	}
	for _, f := range want {
		if got := ResultRecord(f); got != "result/"+f {
			t.Errorf("ResultRecord(%q) = %q, want %q", f, got, "result/"+f)
		}
	}
}
