package cpuprofile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStart(t *testing.T) {
	stop, err := Start("")
	if err != nil {
		t.Fatalf("Start(\"\"): %v", err)
	}
	stop() // does nothing, and must not panic

	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err = Start(path)
	if err != nil {
		t.Fatalf("Start(%s): %v", path, err)
	}
	stop()
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("after stop, %s: %v (size %v), want a profile", path, err, info)
	}

	if _, err := Start(filepath.Join(t.TempDir(), "missing", "cpu.pprof")); err == nil {
		t.Fatal("Start into a missing directory: no error")
	}
}

func TestWriteHeap(t *testing.T) {
	if err := WriteHeap(""); err != nil {
		t.Fatalf("WriteHeap(\"\"): %v", err)
	}
	path := filepath.Join(t.TempDir(), "heap.pprof")
	if err := WriteHeap(path); err != nil {
		t.Fatalf("WriteHeap(%s): %v", path, err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("%s: %v (size %v), want a profile", path, err, info)
	}
	if err := WriteHeap(filepath.Join(t.TempDir(), "missing", "heap.pprof")); err == nil {
		t.Fatal("WriteHeap into a missing directory: no error")
	}
}
