package main

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
)

// capacityFlags are the search's own flags, shared by 'capacity' and
// 'bench --find-capacity'.
type capacityFlags struct {
	slo, axis, rng, goodput string
	resolution              float64
	maxRequests             int
	maxDuration             time.Duration
	timeScale               float64
	roundDuration           time.Duration
	out, from, resume       string
	report                  string
	force                   bool
}

func (cf *capacityFlags) register(cmd *cobra.Command, withSLO bool) {
	fs := cmd.Flags()
	if withSLO {
		fs.StringVar(&cf.slo, "slo", "", "the SLO the load must meet: percentile bounds of ttft, tpot, e2e and/or a goodput share, e.g. 'ttft_p90<=1s,tpot_p90<=50ms' or 'goodput>=95%'")
	}
	fs.StringVar(&cf.axis, "axis", live.AxisConcurrency, "load axis: concurrency (closed-loop users) or rate (open-loop requests/s)")
	fs.StringVar(&cf.rng, "range", "", "LOW:HIGH levels the search may probe (default 1:64 users, or 0.5:32 requests/s on the rate axis)")
	fs.Float64Var(&cf.resolution, "resolution", 0, "stop when the boundary is bracketed this narrowly (default 1 user, or 0.25 requests/s)")
	fs.IntVar(&cf.maxRequests, "max-requests", 0, "budget: stop before the search sends more requests than this (0: no limit)")
	fs.DurationVar(&cf.maxDuration, "max-duration", 0, "budget: start no probe round after the search has run this long (0: no limit)")
	fs.StringVar(&cf.goodput, "goodput-bounds", analyze.DefaultSLO.String(), "per-request bounds a goodput>=P% term counts requests against (ttft=, tpot=, e2e=)")
	fs.StringVar(&cf.report, "report", "", "also write an HTML report of the trace to this file, with the SLO's curve over the probed levels, its bound and the answer")
	fs.DurationVar(&cf.roundDuration, "round-duration", live.DefaultRoundDuration, "rate axis: each probe round sends the rate times this many measured requests (at least 20) from an idle server; rounds are judged as independent draws, so a probe needs 8 of them (in the server's time: a --time-scale shortens it alike)")
	fs.Float64Var(&cf.timeScale, "time-scale", 1, "built-in simulator only: run the profile this many times faster-paced (0.1: every latency ×0.1), with the SLO bounds scaled alike")
}

// search turns the flags into the search's configuration.
func (cf *capacityFlags) search() (capacity.Config, analyze.SLO, error) {
	var c capacity.Config
	var good analyze.SLO
	if strings.TrimSpace(cf.slo) == "" {
		return c, good, usagef("no --slo: give the bound the load must meet, e.g. --slo 'ttft_p90<=1s'")
	}
	slo, err := capacity.ParseSLO(cf.slo)
	if err != nil {
		return c, good, sloFlagError("--slo", err)
	}
	if good, err = analyze.ParseSLO(cf.goodput); err != nil {
		return c, good, goodputBoundsError("--goodput-bounds", err)
	}
	c.SLO = slo
	switch cf.axis {
	case live.AxisConcurrency:
		c.Lo, c.Hi, c.Resolution = 1, 64, 1
	case live.AxisRate:
		c.Lo, c.Hi, c.Resolution = 0.5, 32, 0.25
	default:
		return c, good, usagef("--axis %q: use concurrency or rate", cf.axis)
	}
	if cf.rng != "" {
		lo, hi, ok := strings.Cut(cf.rng, ":")
		l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if !ok || err1 != nil || err2 != nil {
			return c, good, usagef("--range %q: write LOW:HIGH, e.g. --range 1:64", cf.rng)
		}
		if !(l > 0) || !(h >= l) || math.IsInf(h, 0) {
			return c, good, usagef("--range %q is empty: give 0 < LOW <= HIGH", cf.rng)
		}
		if cf.axis == live.AxisConcurrency && math.Floor(h) < math.Ceil(l) {
			return c, good, usagef("--range %q holds no whole number of users", cf.rng)
		}
		if cf.axis == live.AxisConcurrency && h > live.MaxUsers {
			return c, good, usagef("--range %q: use at most %d users", cf.rng, live.MaxUsers)
		}
		c.Lo, c.Hi = l, h
	}
	if cf.resolution < 0 {
		return c, good, usagef("--resolution %g: give a positive step", cf.resolution)
	}
	if cf.resolution > 0 {
		c.Resolution = cf.resolution
	}
	if cf.maxRequests < 0 || cf.maxDuration < 0 {
		return c, good, usagef("--max-requests and --max-duration: give 0 (no limit) or more")
	}
	c.MaxRequests, c.MaxDuration = cf.maxRequests, cf.maxDuration
	if cf.roundDuration < 0 {
		return c, good, usagef("--round-duration %v: give a positive duration", cf.roundDuration)
	}
	if _, err := c.Resolve(); err != nil {
		return c, good, usageError(err)
	}
	return c, good, nil
}
