package selftest

import (
	"slices"
	"testing"
)

// TestTargetsNamed checks that the targets table names every target
// with its bound, in this order, and the two older ones (streams
// held, trace size), whether or not a run measured them: a target missing
// from the table could not be seen missed.
func TestTargetsNamed(t *testing.T) {
	want := []string{
		"client CPU ≤ 1.5 µs/token at 256 streams",
		"client CPU ≤ 12 µs/chunk at 1,024 aligned streams, loopback",
		"10,000 streams held 60 s without client errors",
		"timestamp error p99 ≤ 0.5 ms at 1,024 aligned streams, loopback",
		"timestamp error p99 ≤ 0.5 ms at 1,024 aligned streams, TLS to loopback",
		"timestamp error p99 ≤ 2 ms at 10,000 streams, loopback",
		"timestamp error p99 ≤ 2 ms at 10,000 streams, TLS to loopback",
		"response end − last chunk p99 ≤ 0.5 ms at 16 aligned streams, loopback",
		"chunks read late and not marked in the trace: 0, every section-3 level",
		"schedule lateness p99 ≤ 1.2× the wake-up floor p99 at 500 req/s",
		"schedule lateness p99 ≤ 2× the wake-up floor p99 at 100 req/s",
		"schedule lateness p99 ≤ 2× the wake-up floor p99 at 2,000 req/s",
		"burst send spread ≤ 0.5 ms at 32 requests (largest of the run's bursts)",
		"trace ≤ 4 bytes per output token",
		"analysis ≥ 10 million tokens/s (10M-token trace)",
	}
	var got []string
	for _, v := range (&Result{}).Verdicts() {
		got = append(got, v.Target)
		if v.Met != VerdictNone {
			t.Errorf("%s: %q without any row, want %q", v.Target, v.Met, VerdictNone)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("targets table names\n%q\nwant\n%q", got, want)
	}
}
