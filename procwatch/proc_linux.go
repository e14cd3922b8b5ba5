//go:build linux

package procwatch

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/prometheus/procfs"
)

func procName(pid int) (string, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no process %d is running (see ps or pgrep)", pid)
		}
		return "", fmt.Errorf("process %d cannot be read: %v", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return "", fmt.Errorf("process %d cannot be read: %v", pid, err)
	}
	return st.Comm, nil
}

// descendants lists pid and every process below it.
func descendants(pid int) []int {
	all, err := procfs.AllProcs()
	if err != nil {
		return []int{pid}
	}
	children := map[int][]int{}
	for _, p := range all {
		st, err := p.Stat()
		if err != nil {
			continue // exited while listed
		}
		children[st.PPID] = append(children[st.PPID], p.PID)
	}
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < 4096; i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// readTree reads pid's own figures and the sum over tree (pid first).
// Resident memory summed over processes counts pages they share more than
// once: an upper bound of the tree's memory.
func readTree(pid int, tree []int) (own, sum usage, err error) {
	for _, id := range tree {
		p, perr := procfs.NewProc(id)
		var st procfs.ProcStat
		if perr == nil {
			st, perr = p.Stat()
		}
		if perr != nil {
			if id == pid {
				return own, sum, fmt.Errorf("process %d has exited or cannot be read", pid)
			}
			continue // a child that exited
		}
		u := usage{rss: float64(st.ResidentMemory()), vms: float64(st.VirtualMemory()), cpu: st.CPUTime(), threads: float64(st.NumThreads), n: 1}
		if id == pid {
			own = u
		}
		sum.rss += u.rss
		sum.vms += u.vms
		sum.cpu += u.cpu
		sum.threads += u.threads
		sum.n++
	}
	return own, sum, nil
}
