package main

import "testing"

// TestAgainstTheModel runs the tests that judge wall-clock latencies
// against the simulator's model, through the built binary: a capacity
// search on the concurrency axis and on the rate axis, each against the
// capacity the engine model gives, and a long-input sweep whose TTFT
// grows as the quadratic-prefill fault says. They run in the package's
// serial phase, beside no test but each other: each is a simulator
// keeping its model's pace and one client, well under a core, so the
// three together leave a 2-core machine room, and together they take the
// longest one's time instead of the sum (52 + 33 + 17 s alone on a quiet
// machine). A capacity search whose simulator fell behind its model says
// so, and is then not judged against it.
func TestAgainstTheModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"CapacityAgainstSimTruth", capacityAgainstSimTruth},
		{"CapacityRateAgainstModel", capacityRateAgainstModel},
		{"PrefillSuperlinearThroughTheBinary", prefillSuperlinearThroughTheBinary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
