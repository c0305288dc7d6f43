package schema

import (
	"slices"
	"testing"
)

func TestResultFileNames(t *testing.T) {
	want := []string{"q1.csv", "by-map.csv"}
	if got := ResultFiles([]string{"q1", "by-map"}); !slices.Equal(got, want) {
		t.Errorf("ResultFiles(q1, by-map) = %q, want %q", got, want)
	}
	for _, f := range want {
		if got := ResultRecord(f); got != "result/"+f {
			t.Errorf("ResultRecord(%q) = %q, want %q", f, got, "result/"+f)
		}
	}
}

func TestResultRows(t *testing.T) {
	for in, want := range map[string]int{
		"token\n":                         0,
		"token\na\nb\n":                   2,
		"token\n\"line\nbreak\"\n\n":      2,
		"civ,n\n\"a \"\"q\"\"\n, b\",1\n": 1,
	} {
		if got := ResultRows([]byte(in)); got != want {
			t.Errorf("ResultRows(%q) = %d, want %d", in, got, want)
		}
	}
}
