//go:build !linux

package procwatch

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Without /proc (macOS, the BSDs) the process is read with ps; threads are
// not counted (ps has no portable column for them).

var errUnsupported = errors.New("watching a process needs Linux's /proc or a ps command, and " + runtime.GOOS + " has neither: run llmreplay on the server's machine under Linux or macOS, or leave --watch-pid out")

func psRun(args ...string) (string, error) {
	p, err := exec.LookPath("ps")
	if err != nil {
		return "", errUnsupported
	}
	out, err := exec.Command(p, args...).Output()
	return string(out), err
}

func procName(pid int) (string, error) {
	out, err := psRun("-o", "rss=,time=,comm=", "-p", strconv.Itoa(pid))
	if errors.Is(err, errUnsupported) {
		return "", err
	}
	if err != nil || strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("no process %d is running (see ps or pgrep)", pid)
	}
	_, _, name, perr := psUsage(strings.TrimSpace(out))
	if perr != nil {
		return "", perr
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name, nil
}

func descendants(pid int) []int {
	out, err := psRun("-A", "-o", "pid=,ppid=")
	if err != nil {
		return []int{pid}
	}
	return psTree(out, pid)
}

func readTree(pid int, tree []int) (own, sum usage, err error) {
	for _, id := range tree {
		out, rerr := psRun("-o", "rss=,time=,comm=", "-p", strconv.Itoa(id))
		var rss, cpu float64
		if rerr == nil {
			rss, cpu, _, rerr = psUsage(strings.TrimSpace(out))
		}
		if rerr != nil {
			if id == pid {
				return own, sum, fmt.Errorf("process %d has exited or cannot be read", pid)
			}
			continue
		}
		u := usage{rss: rss, cpu: cpu, n: 1}
		if id == pid {
			own = u
		}
		sum.rss += u.rss
		sum.cpu += u.cpu
		sum.n++
	}
	return own, sum, nil
}
