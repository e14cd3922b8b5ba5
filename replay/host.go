package replay

import (
	"bufio"
	"net/url"
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

// RedactURL returns raw without user info and without query parameters that
// look like credentials, for storing and printing. It never fails: an
// unparseable URL is replaced by a placeholder rather than echoed back,
// since it might hold a key.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			lk := strings.ToLower(k)
			if strings.Contains(lk, "key") || strings.Contains(lk, "token") ||
				strings.Contains(lk, "secret") || strings.Contains(lk, "auth") ||
				strings.Contains(lk, "password") || strings.Contains(lk, "sig") {
				q.Set(k, "REDACTED")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
