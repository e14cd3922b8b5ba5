package replay

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"github.com/llmreplay/llmreplay/trace"
)

// hostInfo describes the client machine for the trace header: the same
// server measured from a slower client can give different figures.
func hostInfo() trace.Host {
	h := trace.Host{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		CPU:       cpuModel(),
	}
	if name, err := os.Hostname(); err == nil {
		h.Hostname = name
	}
	return h
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
