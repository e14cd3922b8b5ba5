package replay

import "golang.org/x/sys/unix"

// fifoPriority is the realtime priority asked for: the lowest, which is
// enough to preempt every thread of the normal policy and stays below the
// kernel's own realtime threads (and cyclictest's usual 80-99).
const fifoPriority = 1

// policySteps are SCHED_FIFO, SCHED_RR (sched_setattr on the thread) and
// nice -20 (setpriority on the thread id, which Linux applies to that
// thread alone).
func policySteps() []policyStep {
	rt := func(policy uint32) func(int) error {
		return func(tid int) error {
			return unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: policy, Priority: fifoPriority}, 0)
		}
	}
	return []policyStep{
		{PolicyFIFO, rt(unix.SCHED_FIFO)},
		{PolicyRR, rt(unix.SCHED_RR)},
		{PolicyNice, func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, -20) }},
	}
}

func threadID() int { return unix.Gettid() }
