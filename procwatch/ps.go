package procwatch

import (
	"fmt"
	"strconv"
	"strings"
)

// ps is how procwatch reads a process where there is no /proc (macOS):
// `ps -o rss=,time=,comm= -p PID` for the process and `ps -A -o
// pid=,ppid=` for its descendants. The parsing lives here, without a build
// constraint, so Linux tests check it on macOS-shaped output.

// psUsage parses one line of `ps -o rss=,time=,comm=`: resident memory in
// KiB, CPU time as [[dd-]hh:]mm:ss[.cc], then the command name.
func psUsage(line string) (rssBytes, cpuSeconds float64, name string, err error) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return 0, 0, "", fmt.Errorf("ps printed %q, not RSS, time and command", line)
	}
	kib, err := strconv.ParseFloat(f[0], 64)
	if err != nil || kib < 0 {
		return 0, 0, "", fmt.Errorf("ps printed RSS %q", f[0])
	}
	cpu, err := psTime(f[1])
	if err != nil {
		return 0, 0, "", err
	}
	return kib * 1024, cpu, strings.Join(f[2:], " "), nil
}

// psTime parses ps's CPU time: [[dd-]hh:]mm:ss[.cc].
func psTime(s string) (float64, error) {
	bad := fmt.Errorf("ps printed CPU time %q", s)
	days := 0.0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		v, err := strconv.ParseFloat(d, 64)
		if err != nil || v < 0 {
			return 0, bad
		}
		days, s = v, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, bad
	}
	total := 0.0
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 {
			return 0, bad
		}
		total = total*60 + v
	}
	return days*86400 + total, nil
}

// psTree lists pid and its descendants from `ps -A -o pid=,ppid=`.
func psTree(out string, pid int) []int {
	children := map[int][]int{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		p, err1 := strconv.Atoi(f[0])
		pp, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || p == pp {
			continue
		}
		children[pp] = append(children[pp], p)
	}
	tree := []int{pid}
	for i := 0; i < len(tree) && len(tree) < 4096; i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}
