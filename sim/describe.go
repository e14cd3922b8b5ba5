package sim

import (
	"fmt"
	"io"
	"net"
	"strings"
)

// WriteProfiles writes every profile with its parameters, as `sim --list`
// shows them.
func WriteProfiles(w io.Writer) {
	fmt.Fprintln(w, "Profiles (step = decode step for a batch of b streams; see docs/SIMULATOR.md):")
	for _, p := range Profiles() {
		fmt.Fprintln(w, p.String())
	}
}

// ProfileNames are the profiles' names, in Profiles' order.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// Faults says which faults c switches on, as the `sim` flags that set
// them ("--drop-usage --error-rate 0.1"); "" when none is on.
func (c Config) Faults() string {
	var f []string
	add := func(on bool, s string, a ...any) {
		if on {
			f = append(f, fmt.Sprintf(s, a...))
		}
	}
	add(c.MaxContext > 0, "--max-context %d", c.MaxContext)
	add(c.NoStream, "--no-stream")
	add(c.TokensPerChunk > 1, "--tokens-per-chunk %d", c.TokensPerChunk)
	add(c.DropUsage, "--drop-usage")
	add(c.InflateUsage > 1, "--inflate-usage %d", c.InflateUsage)
	add(c.StallAfter > 0, "--stall-after %d", c.StallAfter)
	add(c.ResetAfter > 0, "--reset-after %d", c.ResetAfter)
	add(c.ErrorRate > 0, "--error-rate %g", c.ErrorRate)
	add(c.Overrun > 1, "--overrun %d", c.Overrun)
	add(c.QuadraticPrefill > 0, "--quadratic-prefill %v", c.QuadraticPrefill)
	return strings.Join(f, " ")
}

// Loopback reports whether host only accepts local connections: a
// simulator listening anywhere else is reachable from other machines,
// and it has no authentication.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
