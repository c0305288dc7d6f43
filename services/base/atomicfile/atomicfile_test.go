package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// dirNames lists dir, so that a leftover temporary file shows.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	cases := []struct {
		name     string
		existing []byte // the target's contents before, nil for none
		data     []byte
		perm     os.FileMode
	}{
		{"new file", nil, []byte("q1\n"), 0o644},
		{"new empty file", nil, []byte{}, 0o644},
		{"private", nil, []byte("secret\n"), 0o600},
		{"executable bits as given", nil, []byte("#!/bin/sh\n"), 0o755},
		{"replaces a longer file", []byte("a much longer old content\n"), []byte("short\n"), 0o644},
		{"replaces and changes mode", []byte("old\n"), []byte("new\n"), 0o640},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			if c.existing != nil {
				if err := os.WriteFile(path, c.existing, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, c.data, c.perm); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(c.data) {
				t.Fatalf("read %q, %v; want %q", got, err, c.data)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != c.perm {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), c.perm)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"out.csv"}) {
				t.Errorf("directory holds %q, want only out.csv", names)
			}
		})
	}
}

func TestWriteErrorsLeaveNothingBehind(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the target path
		want  []string                              // the directory afterwards
	}{
		{"missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "no", "such", "out.csv")
		}, nil},
		{"target is a non-empty directory", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "out.csv")
			if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
			return path
		}, []string{"out.csv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			if err := Write(path, []byte("x\n"), 0o644); err == nil {
				t.Fatal("Write succeeded")
			}
			if names := dirNames(t, dir); !slices.Equal(names, c.want) {
				t.Errorf("directory holds %q, want %q", names, c.want)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	cases := []struct {
		name     string
		existing bool
		commit   bool
	}{
		{"commit new", false, true},
		{"commit over existing", true, true},
		{"abort new", false, false},
		{"abort keeps existing", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "matches.csv")
			if c.existing {
				if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Abort()
			for _, part := range []string{"a,b\n", "1,2\n", "3,4\n"} {
				if _, err := f.Write([]byte(part)); err != nil {
					t.Fatal(err)
				}
			}
			// Nothing shows at path before Commit.
			if got, err := os.ReadFile(path); c.existing && string(got) != "old\n" || !c.existing && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("before commit: read %q, %v", got, err)
			}
			want := "old\n"
			if c.commit {
				if err := f.Commit(); err != nil {
					t.Fatalf("Commit: %v", err)
				}
				want = "a,b\n1,2\n3,4\n"
			} else {
				f.Abort()
			}
			f.Abort() // a no-op now

			got, err := os.ReadFile(path)
			if !c.commit && !c.existing {
				if !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("after abort: read %q, %v; want no file", got, err)
				}
				if names := dirNames(t, dir); len(names) != 0 {
					t.Errorf("directory holds %q after abort, want nothing", names)
				}
				return
			}
			if err != nil || string(got) != want {
				t.Fatalf("read %q, %v; want %q", got, err, want)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"matches.csv"}) {
				t.Errorf("directory holds %q, want only matches.csv", names)
			}
		})
	}
}

func TestFinishedFileRefusesUse(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "x"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("late")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Commit: %v, want os.ErrClosed", err)
	}
	if err := f.Commit(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Commit: %v, want os.ErrClosed", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "x")); err != nil || len(got) != 0 {
		t.Errorf("read %q, %v; want an empty file", got, err)
	}
}
