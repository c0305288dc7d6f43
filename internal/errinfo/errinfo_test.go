package errinfo

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestIsTellsTheReasonApart(t *testing.T) {
	err := New(codes.NotFound, "no job j", "d", "R")
	if status.Code(err) != codes.NotFound || status.Convert(err).Message() != "no job j" {
		t.Fatalf("New = %v", err)
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"its own", err, true},
		{"wrapped", fmt.Errorf("open: %w", err), true},
		{"another reason", New(codes.NotFound, "x", "d", "S"), false},
		{"another domain", New(codes.NotFound, "x", "e", "R"), false},
		{"another code", New(codes.Unavailable, "x", "d", "R"), false},
		{"no detail", status.Error(codes.NotFound, "no job j"), false},
		{"not a status", fmt.Errorf("no job j"), false},
		{"nil", nil, false},
	} {
		if got := Is(c.err, codes.NotFound, "d", "R"); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
}
