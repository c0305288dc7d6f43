package spill_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/spill"
)

var cols = []plan.Column{{Name: "k", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}

// batch is n rows from row `from`: every seventh one's values NULL.
func batch(t *testing.T, from, n int) *exec.Batch {
	t.Helper()
	b := &exec.Batch{N: n}
	for _, c := range cols {
		bl := exec.NewVecBuilder(c.Type, n)
		for i := from; i < from+n; i++ {
			if i%7 == 3 {
				bl.Null()
				continue
			}
			v := map[plan.Type]string{plan.Text: fmt.Sprintf("key-%d", i), plan.Number: fmt.Sprintf("%d.%d", i, i%100), plan.Bool: fmt.Sprint(i%2 == 0)}[c.Type]
			if err := bl.Text([]byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		b.Cols = append(b.Cols, bl.Vec())
	}
	return b
}

// text is b's rows as text, to compare.
func text(b *exec.Batch) [][]string {
	var out [][]string
	for i := range b.N {
		var row []string
		for _, v := range b.Cols {
			if v.IsNull(i) {
				row = append(row, "NULL")
			} else {
				row = append(row, string(exec.AppendText(nil, v, i)))
			}
		}
		out = append(out, row)
	}
	return out
}

// TestFilesReadBackWhatWasAppended: each partition gives back its
// batches (all rows, or some) in the order they were appended, appends
// after a read included; the bytes are counted, and Close removes the
// directory.
func TestFilesReadBackWhatWasAppended(t *testing.T) {
	root := t.TempDir()
	s := spill.NewSpace(root, "shard-0", 0)
	f := s.Files("join7-right", 3, cols)
	var want [3][][]string
	for i := range 10 {
		b := batch(t, 100*i, 50+i)
		p := i % 3
		var rows []int32
		if i%2 == 1 {
			rows = []int32{0, 2, 3, 10, 49}
		}
		if err := f.Append(p, b, rows); err != nil {
			t.Fatal(err)
		}
		if rows != nil {
			b = b.Rows(rows)
		}
		want[p] = append(want[p], text(b)...)
		if i == 5 { // a read in the middle, appends after it
			checkParts(t, f, want[:])
		}
	}
	checkParts(t, f, want[:])
	if s.Used() != f.Bytes(0)+f.Bytes(1)+f.Bytes(2) || s.Used() == 0 {
		t.Fatalf("used %d, partitions %d %d %d", s.Used(), f.Bytes(0), f.Bytes(1), f.Bytes(2))
	}
	dir := s.Dir()
	if filepath.Dir(dir) != root {
		t.Fatalf("directory %s, not under %s", dir, root)
	}
	used := s.Used()
	if err := f.Drop(1); err != nil {
		t.Fatal(err)
	}
	if s.Used() >= used {
		t.Fatalf("used %d after a drop, %d before", s.Used(), used)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after Close, %s: %v", dir, err)
	}
}

func checkParts(t *testing.T, f *spill.Files, want [][][]string) {
	t.Helper()
	for p := range want {
		var got [][]string
		if err := f.Read(p, func(b *exec.Batch) error {
			got = append(got, text(b)...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[p]) {
			t.Fatalf("partition %d: read %d rows, want %d:\n%v\n%v", p, len(got), len(want[p]), got, want[p])
		}
	}
}

// TestSpaceStopsAtItsLimit: an append past the limit is refused with an
// *OverLimit, and writes nothing.
func TestSpaceStopsAtItsLimit(t *testing.T) {
	s := spill.NewSpace(t.TempDir(), "t", 2000)
	defer s.Close()
	f := s.Files("x", 1, cols)
	var err error
	for i := 0; err == nil && i < 100; i++ {
		err = f.Append(0, batch(t, i*20, 20), nil)
	}
	var over *spill.OverLimit
	if !errors.As(err, &over) || over.Limit != 2000 || over.Spent <= 2000 {
		t.Fatalf("err %v, want an OverLimit past 2000", err)
	}
	if s.Used() > 2000 {
		t.Fatalf("used %d, past the limit", s.Used())
	}
}

// TestSpacesShareTheirRoot: the spaces of a job's task instances make
// their directories under one root, which a space that closes removes
// when it leaves it empty; one that makes its directory meanwhile never
// finds the root gone under it (roots). Run side by side, many times,
// none fails, and the root is gone at the end. (Without roots, it failed
// 3 runs of 3: "spill: stat .../job: no such file or directory".)
func TestSpacesShareTheirRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "job")
	rows := batch(t, 0, 3) // made here: a test's helpers fail it from its own goroutine only
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := range 300 {
				s := spill.NewSpace(root, fmt.Sprintf("task-%d-%d", w, i), 0)
				f := s.Files("rows", 1, cols)
				if err := f.Append(0, rows, nil); err != nil {
					errs <- err
					return
				}
				if err := s.Close(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the root is left: %v", err)
	}
}
