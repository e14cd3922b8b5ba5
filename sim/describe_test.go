package sim

import (
	"strings"
	"testing"
	"time"
)

// TestLoopback: only loopback addresses and localhost count as local;
// the wildcard and an empty host listen on every interface.
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "LOCALHOST": true, "0.0.0.0": false, "": false, "10.1.2.3": false} {
		if Loopback(host) != want {
			t.Errorf("Loopback(%q) = %v", host, !want)
		}
	}
}

// TestFaultsInFlagForm: every fault switched on is named as the flag that
// sets it, in a fixed order; the defaults name none.
func TestFaultsInFlagForm(t *testing.T) {
	if f := (Config{TokensPerChunk: 1, InflateUsage: 1, Overrun: 1}).Faults(); f != "" {
		t.Errorf("defaults: %q", f)
	}
	c := Config{MaxContext: 32768, DropUsage: true, InflateUsage: 10, ErrorRate: 0.25, QuadraticPrefill: 50 * time.Nanosecond}
	if f := c.Faults(); f != "--max-context 32768 --drop-usage --inflate-usage 10 --error-rate 0.25 --quadratic-prefill 50ns" {
		t.Errorf("got %q", f)
	}
}

// TestProfileList: sim --list names every profile, one a line after the
// heading.
func TestProfileList(t *testing.T) {
	var b strings.Builder
	WriteProfiles(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	names := ProfileNames()
	if len(lines) < len(names)+1 || !strings.HasPrefix(lines[0], "Profiles (") {
		t.Fatalf("list:\n%s", b.String())
	}
	for _, n := range names {
		if !strings.Contains(b.String(), n) {
			t.Errorf("%s not listed", n)
		}
	}
}
