//go:build linux

package procwatch

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

func value(s trace.Scrape, name string) (float64, bool) {
	for _, x := range s.Samples {
		if x.Name == name {
			return x.Value, true
		}
	}
	return 0, false
}

// TestWatchTree watches this test process with a child it started: the
// process's own figures are plausible, and the tree counts the child.
func TestWatchTree(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	w, err := New(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Target(), "pid ") {
		t.Errorf("target %q", w.Target())
	}
	var clock int64
	s := w.Sample(context.Background(), func() int64 { clock++; return clock })
	if s.Error != "" || s.Source != trace.SourceProcess {
		t.Fatalf("scrape %+v", s)
	}
	rss, _ := value(s, "process_resident_memory_bytes")
	threads, _ := value(s, "process_threads")
	treeRSS, _ := value(s, "process_tree_resident_memory_bytes")
	procs, _ := value(s, "process_tree_processes")
	if rss < 1<<20 || threads < 1 || treeRSS < rss || procs < 2 {
		t.Errorf("rss %v, threads %v, tree rss %v, processes %v", rss, threads, treeRSS, procs)
	}
}

// TestWatchRefuses: a pid that is not running is refused up front, and a
// process that exits mid-run gives failed scrapes, not an error.
func TestWatchRefuses(t *testing.T) {
	if _, err := New(-3); err == nil {
		t.Error("a negative pid was accepted")
	}
	if _, err := New(1 << 30); err == nil || !strings.Contains(err.Error(), "no process") {
		t.Errorf("a pid that does not exist: %v", err)
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	w, err := New(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	child.Process.Kill()
	child.Wait()
	s := w.Sample(context.Background(), func() int64 { return 1 })
	if !strings.Contains(s.Error, "exited") || len(s.Samples) != 0 {
		t.Errorf("scrape of an exited process: %+v", s)
	}
}
