//go:build !linux

package replay

// policySteps: elsewhere no per-thread policy is asked for.
func policySteps() []policyStep { return nil }

func threadID() int { return 0 }
