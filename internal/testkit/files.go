package testkit

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// SameFiles checks that dir holds each file of want, by name, byte for
// byte, as the tests that compare a job's result files with the
// reference's (its Files) do; SameBytes says how.
func SameFiles(t testing.TB, dir string, want map[string][]byte) {
	t.Helper()
	sameEach(t, want, func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) })
}

// SameBytes checks that got holds each entry of want byte for byte, in
// name order, showing the start of both sides of each that differs. An
// empty want fails: a comparison of nothing checks nothing.
func SameBytes(t testing.TB, got, want map[string][]byte) {
	t.Helper()
	sameEach(t, want, func(name string) ([]byte, error) {
		b, ok := got[name]
		if !ok {
			return nil, errors.New("missing")
		}
		return b, nil
	})
}

// sameEach compares each entry of want, in name order, with what get
// returns for its name.
func sameEach(t testing.TB, want map[string][]byte, get func(name string) ([]byte, error)) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("nothing to compare: no expected files")
		return
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		got, err := get(name)
		switch {
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case !bytes.Equal(got, want[name]):
			t.Errorf("%s differs:\n got %.300q\nwant %.300q", name, got, want[name])
		}
	}
}
