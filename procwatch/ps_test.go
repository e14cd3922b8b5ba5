package procwatch

import (
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestPSParsing: macOS-shaped ps output (rss in KiB, cputime as
// [[dd-]hh:]mm:ss.cc) is read as bytes and seconds, and the process tree
// from pid/ppid pairs.
func TestPSParsing(t *testing.T) {
	for _, tc := range []struct {
		line      string
		rss, cpu  float64
		name      string
		wantError bool
	}{
		// 734,004 KiB = 751,620,096 bytes; 1:02.50 = 62.5 s.
		{"734004   1:02.50 /usr/local/bin/llama-server", 734004 * 1024, 62.5, "/usr/local/bin/llama-server", false},
		// 1-02:03:04 = 86,400 + 7,384 = 93,784 s.
		{" 2048 1-02:03:04 ollama runner", 2048 * 1024, 93784, "ollama runner", false},
		{"12 0:00.00", 0, 0, "", true},
		{"x 0:01.00 a", 0, 0, "", true},
		{"12 1:xx a", 0, 0, "", true},
	} {
		rss, cpu, name, err := psUsage(tc.line)
		if (err != nil) != tc.wantError {
			t.Errorf("%q: error %v", tc.line, err)
			continue
		}
		if !tc.wantError && (rss != tc.rss || math.Abs(cpu-tc.cpu) > 1e-9 || name != tc.name) {
			t.Errorf("%q: rss %v cpu %v name %q", tc.line, rss, cpu, name)
		}
	}
	out := "    1     0\n  100     1\n  200   100\n  201   100\n  300   200\n  999     1\n"
	tree := psTree(out, 100)
	if len(tree) != 4 || tree[0] != 100 {
		t.Errorf("tree of 100: %v, want 100 and 200, 201, 300", tree)
	}
}

// TestPSOnThisMachine reads this test process with the real ps command
// where there is one (procps on Linux prints time as hh:mm:ss), so the
// macOS path's parsing is checked against a real ps too.
func TestPSOnThisMachine(t *testing.T) {
	p, err := exec.LookPath("ps")
	if err != nil {
		t.Skip("no ps command")
	}
	out, err := exec.Command(p, "-o", "rss=,time=,comm=", "-p", strconv.Itoa(os.Getpid())).Output()
	if err != nil {
		t.Skip("ps does not take -o rss=,time=,comm=:", err)
	}
	rss, cpu, name, err := psUsage(strings.TrimSpace(string(out)))
	if err != nil || rss < 1<<20 || cpu < 0 || name == "" {
		t.Errorf("%q: rss %v cpu %v name %q err %v", out, rss, cpu, name, err)
	}
	tree, err := exec.Command(p, "-A", "-o", "pid=,ppid=").Output()
	if err != nil {
		t.Skip("ps -A -o pid=,ppid= failed:", err)
	}
	if got := psTree(string(tree), os.Getppid()); len(got) < 2 {
		t.Errorf("the tree of this test's parent holds %v, not this process", got)
	}
}
