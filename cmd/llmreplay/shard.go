package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// shardFlags are replay's flags for one part of a run sent from several
// client machines (docs/DISTRIBUTED.md).
type shardFlags struct {
	shard   string
	shards  int
	startAt string
	startIn time.Duration
}

// jobIndexEnv is set by Kubernetes in every pod of an Indexed Job.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// maxStartWait bounds --start-at both ways: a start further away is a
// typo (a wrong day or time zone), not a plan. One that passed within it
// is a shard that started late (a retried pod, a slow machine): it runs,
// and says so (runNotes), since it no longer lines up with the others.
const maxStartWait = 24 * time.Hour

func (f *shardFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.shard, "shard", "", "send only part I of N of the workload (I from 0), e.g. 0/4; merge the parts with 'trace merge'")
	fs.IntVar(&f.shards, "shards", 0, "the number of parts when the part's index comes from $"+jobIndexEnv+" (a Kubernetes Indexed Job)")
	fs.StringVar(&f.startAt, "start-at", "", "wait until this wall-clock time (RFC 3339, e.g. 2026-12-03T10:00:00Z) before starting, so every shard starts together")
	fs.DurationVar(&f.startIn, "start-in", 0, "wait this long before starting (for shards started together by hand; prefer --start-at across machines)")
}

// apply cuts the workload to this shard's part and sets the shard and
// start fields of cfg. It returns the part (wl itself when not sharded).
func (f *shardFlags) apply(cfg *replay.Config, wl *workload.Workload, now time.Time) error {
	var spec workload.ShardSpec
	sharded := false
	switch {
	case f.shard != "" && f.shards != 0:
		return usagef("--shard and --shards both given: use --shard I/N, or --shards N with $%s set", jobIndexEnv)
	case f.shard != "":
		s, err := workload.ParseShard(f.shard)
		if err != nil {
			return usagef("--shard: %v", err)
		}
		spec, sharded = s, true
	case f.shards != 0:
		v, ok := os.LookupEnv(jobIndexEnv)
		if !ok {
			return usagef("--shards %d needs $%s (set by a Kubernetes Indexed Job) for this part's index: outside a Job use --shard I/%d", f.shards, jobIndexEnv, f.shards)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return usagef("$%s is %q, not a whole number", jobIndexEnv, v)
		}
		spec, sharded = workload.ShardSpec{Index: i, Count: f.shards}, true
		if err := spec.Valid(); err != nil {
			return usagef("--shards %d with $%s=%d: %v", f.shards, jobIndexEnv, i, err)
		}
	}
	if f.startAt != "" && f.startIn != 0 {
		return usagef("--start-at and --start-in both given: use one")
	}
	if f.startIn < 0 || f.startIn > maxStartWait {
		return usagef("--start-in %v: give a wait from 0 to %v", f.startIn, maxStartWait)
	}
	if f.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, f.startAt)
		if err != nil {
			return usagef("--start-at %q is not an RFC 3339 time: write it like 2026-12-03T10:00:00Z", f.startAt)
		}
		if t.Sub(now) > maxStartWait {
			return usagef("--start-at %s is more than %v away: check the date and time zone", f.startAt, maxStartWait)
		}
		if late := now.Sub(t); late > maxStartWait {
			return usagef("--start-at %s passed %v ago, more than %v: check the date and time zone, or leave --start-at out to start now", f.startAt, late.Round(time.Minute), maxStartWait)
		}
		cfg.StartAt = t
	} else if f.startIn > 0 {
		cfg.StartAt = now.Add(f.startIn)
	}
	if !sharded {
		return nil
	}
	part, err := workload.Shard(wl, spec)
	if err != nil {
		return usagef("--shard: %v", err)
	}
	if len(part.Requests) == 0 {
		return usagef("shard %s has no request to send: the workload has %d requests, too few for %d shards", spec, len(wl.Requests), spec.Count)
	}
	cfg.WorkloadDigest = workload.Digest(wl)
	cfg.Workload = part
	cfg.Shard = &trace.Shard{Index: spec.Index, Count: spec.Count}
	return nil
}

// clockWarning says, before a shard runs, when its clock is too poor for
// its trace to be merged with shards from other hosts (docs/DISTRIBUTED.md).
func clockWarning(cfg *replay.Config) string {
	if cfg.Shard == nil {
		return ""
	}
	c := replay.WallClockError()
	if c.Trusted() {
		return ""
	}
	return fmt.Sprintf("warning: this machine's clock %s: trace merge will take this shard beside shards from other hosts only with --allow-clock (shards on this host share its clock and merge exactly)",
		clockDesc(c))
}

// shardSuffix names a shard's default trace, "-shard0of4".
func shardSuffix(s *trace.Shard) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("-shard%dof%d", s.Index, s.Count)
}
