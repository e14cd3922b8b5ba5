package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
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

func newCapacityCmd() *cobra.Command {
	var (
		f       replayFlags
		cf      capacityFlags
		shape   string
		profile string
		in, max int
		tok     string
		results string
	)
	cmd := &cobra.Command{
		Use:     "capacity --slo SLO [--url URL] [flags]",
		Short:   "How much load a server takes while an SLO holds: the largest concurrency (or request rate) meeting it, with its interval",
		Long:    helpText("capacity"),
		Example: helpText("capacity.example"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cf.from != "" {
				return reanalyseCapacity(cmd, &cf)
			}
			opts := capacityRun{f: &f, cf: &cf, shape: shape, profile: profile, inputTokens: in, maxTokens: max,
				tokenizer: tok, results: results, profileSet: cmd.Flags().Changed("profile")}
			return runCapacity(cmd, opts)
		},
	}
	f.register(cmd, replay.DefaultAPI)
	cf.register(cmd, true)
	fs := cmd.Flags()
	fs.StringVar(&f.cfg.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&profile, "profile", bench.DefaultProfile, "simulator profile when no --url ("+strings.Join(sim.ProfileNames(), ", ")+")")
	fs.IntVar(&in, "input-tokens", 800, "exact prompt length in tokens")
	fs.IntVar(&max, "max-tokens", 256, "output tokens per request")
	fs.StringVar(&tok, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base or a tokenizer.json path")
	fs.StringVar(&shape, "shape", string(workload.ShapeChat), "chat or completion")
	fs.StringVar(&results, "results", bench.DefaultResults, "folder for the trace")
	fs.StringVarP(&cf.out, "out", "o", "", "trace path (default: under --results, named by label and time)")
	fs.StringVar(&cf.from, "from", "", "answer again from a capacity trace (for --slo, default its own), sending nothing")
	fs.StringVar(&cf.resume, "resume", "", "continue the search a stopped run recorded in this capacity trace (same flags as that run); the trace grows in place")
	fs.BoolVar(&cf.force, "force", false, "replace the -o trace or the --report file if it exists (never an input)")
	return cmd
}

// capacityRun is what runCapacity needs from either command.
type capacityRun struct {
	f                      *replayFlags
	cf                     *capacityFlags
	shape, profile         string
	profileSet             bool
	inputTokens, maxTokens int
	tokenizer, results     string
}

// config checks the flags and turns them into the run's configuration.
func (o capacityRun) config() (live.Config, error) {
	f, cf := o.f, o.cf
	sc, good, err := cf.search()
	if err != nil {
		return live.Config{}, err
	}
	switch {
	case f.cfg.URL != "" && o.profileSet:
		return live.Config{}, usagef("--profile applies to the built-in simulator only: drop it, or drop --url")
	case f.cfg.URL != "" && cf.timeScale != 1:
		return live.Config{}, usagef("--time-scale applies to the built-in simulator only: drop it, or drop --url")
	case !(cf.timeScale > 0 && cf.timeScale <= 1):
		return live.Config{}, usagef("--time-scale %g: use a factor above 0 and at most 1 (0.1 runs ten times faster)", cf.timeScale)
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"input-tokens", o.inputTokens}, {"max-tokens", o.maxTokens}} {
		if n.v < 1 || n.v > workload.MaxInputTokens {
			return live.Config{}, usagef("--%s %d: give 1 to %d", n.flag, n.v, workload.MaxInputTokens)
		}
	}
	rc, err := f.config(nil, "")
	if err != nil {
		return live.Config{}, err
	}
	rc.Tokenizer = o.tokenizer
	lc := live.Config{Replay: rc, Search: sc, Axis: cf.axis, InputTokens: o.inputTokens, MaxTokens: o.maxTokens,
		Tokenizer: o.tokenizer, Shape: workload.Shape(o.shape), GoodputBounds: good, TimeScale: cf.timeScale, RoundDuration: cf.roundDuration, Resume: cf.resume}
	if f.cfg.URL == "" {
		lc.Profile = o.profile
	}
	return lc, nil
}

func runCapacity(cmd *cobra.Command, o capacityRun) error {
	cf := o.cf
	lc, err := o.config()
	if err != nil {
		return err
	}
	errw, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	release, err := o.claimTrace(&lc)
	if err != nil {
		return err
	}
	defer release()
	if _, err := lc.Resolve(); err != nil {
		return usageError(err)
	}
	if o.f.cfg.URL == "" {
		fmt.Fprintf(errw, "no --url: searching llmreplay's SIMULATED server, profile %s (figures are the model's, not a real engine's)\n", o.profile)
	}
	if !o.f.quiet {
		lc.OnProbe = func(x float64, round int, s *replay.Summary) {
			fmt.Fprintln(errw, live.ProbeLine(cf.axis, x, round, s))
		}
	}
	res, err := live.Run(cmd.Context(), lc)
	switch {
	case res == nil && err != nil && cf.resume != "" && strings.HasPrefix(err.Error(), "--resume"):
		return usageError(err)
	case res == nil && err != nil:
		return usageErrorIfInput(flagError(err))
	case res == nil:
		return nil
	}
	// No trace is written until a probe round finishes.
	written := traceWritten(res.Trace)
	if err != nil && !written && cmd.Context().Err() == nil {
		// Nothing measured (the server was not reached, say): no table
		// to show and no file to point at, and the error in the flags'
		// words, as replay gives it.
		return flagError(err)
	}
	res.WriteText(out)
	if written {
		fmt.Fprintf(errw, "trace: %s (answer again for another SLO: llmreplay capacity --from %s --slo '…')\n", res.Trace, res.Trace)
	}
	if cf.report != "" && len(res.Probes) > 0 {
		if rerr := capacity.WriteReport(cf.report, res.Trace, res.Shown()); rerr != nil {
			return rerr
		}
		fmt.Fprintf(errw, "report: %s\n", cf.report)
	}
	switch {
	case err != nil && cmd.Context().Err() != nil && !written:
		return &exitError{code: 130, err: errors.New("stopped before any probe round finished: no trace written")}
	case err != nil && cmd.Context().Err() != nil:
		return &exitError{code: 130, err: fmt.Errorf("stopped: %s holds every probe round that finished", res.Trace)}
	case err != nil:
		return fmt.Errorf("%v (the trace %s holds every probe round that finished)", err, res.Trace)
	}
	return undetermined(res.Result)
}

// claimTrace chooses the trace's path (-o, --resume's trace, or a new
// name under --results) and claims it before anything is sent, so that
// neither an existing file nor another run started in the same second
// (the default name is timestamped to the second) is replaced when the
// first probe round is written; release removes a claim no round filled.
func (o capacityRun) claimTrace(lc *live.Config) (release func(), err error) {
	cf, path := o.cf, o.cf.out
	if cf.resume != "" && path == "" {
		path = cf.resume
	}
	if path == "" {
		if err := os.MkdirAll(o.results, 0o755); err != nil {
			return nil, folderError("--results", o.results, fmt.Errorf("cannot create the results folder %s: %w", o.results, err))
		}
		label := lc.Replay.Label
		if label == "" && o.f.cfg.URL == "" {
			label = "sim " + o.profile
		}
		path = live.DefaultTracePath(o.results, label, lc.Replay.Model, time.Now())
	}
	lc.Trace = path
	if dir := path[:max(0, strings.LastIndexByte(path, '/'))]; dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, usagef("-o %s: the folder %s does not exist: create it first", path, dir)
		}
	}
	if cf.report != "" {
		if err := outfile.Check(cf.report, cf.force, path); err != nil {
			return nil, usagef("--report: %v", err)
		}
	}
	switch {
	case path == cf.resume:
		return func() {}, nil // --resume grows its own trace in place.
	case cf.out == "":
		const ext = ".capacity.trace.zst"
		stem, err := outfile.ClaimNumbered(strings.TrimSuffix(path, ext), ext)
		switch {
		case errors.Is(err, fs.ErrExist):
			return nil, usagef("cannot name the trace: %v; choose another --results folder or -o", err)
		case err != nil:
			return nil, usagef("%v; choose another --results folder", err)
		}
		lc.Trace = stem + ext
		return outfile.Claimed(lc.Trace), nil
	}
	if err := outfile.Check(path, cf.force, cf.resume); err != nil {
		return nil, usagef("-o: %v", err)
	}
	if cf.force {
		return func() {}, nil
	}
	if err := outfile.Claim(path); errors.Is(err, fs.ErrExist) {
		return nil, usagef("-o: cannot write %s: it exists; pass --force to replace it, or choose another output name", path)
	} else if err != nil {
		return nil, usagef("-o %s: %v", path, err)
	}
	return outfile.Claimed(path), nil
}

// traceWritten reports whether a probe round has been written to path:
// an empty file is a claim only.
func traceWritten(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

func undetermined(r *capacity.Result) error {
	switch r.Outcome {
	case capacity.Budget, capacity.ErrorsHit, capacity.NoDecision:
		return &exitError{code: 1, err: fmt.Errorf("could not determine the capacity: %s", r.Reason)}
	}
	return nil
}

// reanalyseCapacity is 'capacity --from TRACE': the answer again, for
// --slo (default the trace's own), nothing sent.
func reanalyseCapacity(cmd *cobra.Command, cf *capacityFlags) error {
	var slo capacity.SLO
	var good analyze.SLO
	var err error
	if strings.TrimSpace(cf.slo) != "" {
		if slo, err = capacity.ParseSLO(cf.slo); err != nil {
			return sloFlagError("--slo", err)
		}
	}
	if cmd.Flags().Changed("goodput-bounds") {
		if good, err = analyze.ParseSLO(cf.goodput); err != nil {
			return goodputBoundsError("--goodput-bounds", err)
		}
	}
	for _, name := range []string{"url", "axis", "range", "resolution", "max-requests", "max-duration", "time-scale", "profile", "out", "resume"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s does not apply with --from: the trace holds what the search ran", name)
		}
	}
	if cf.report != "" {
		if err := outfile.Check(cf.report, cf.force, cf.from); err != nil {
			return usagef("--report: %v", err)
		}
	}
	r, err := live.Reanalyse(cf.from, slo, good)
	if err != nil {
		return usageError(err)
	}
	r.WriteText(cmd.OutOrStdout(), cf.from, slo)
	if cf.report != "" {
		if err := capacity.WriteReport(cf.report, cf.from, r.Shown(slo)); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "report: %s\n", cf.report)
	}
	return undetermined(r.Result)
}

// benchFindCapacity is 'bench --find-capacity SLO': the capacity search
// with bench's server, workload and results flags, on the concurrency axis.
func benchFindCapacity(cmd *cobra.Command, f *replayFlags, slo, profile, shape string, cfg bench.Config) error {
	fs := cmd.Flags()
	for _, name := range []string{"repeats", "definitions"} {
		if fs.Changed(name) {
			return usagef("--%s applies to the sweep, not to --find-capacity: drop one of them", name)
		}
	}
	if len(cfg.InputTokens) != 1 {
		return usagef("--find-capacity takes one --input-tokens length, not %d", len(cfg.InputTokens))
	}
	// The search's own checks name capacity's flags (--slo, --range),
	// which bench does not have: what the user typed here is checked
	// first, in bench's words.
	if strings.TrimSpace(slo) == "" {
		return usagef("--find-capacity is empty: give the SLO the load must meet, e.g. --find-capacity 'ttft_p90<=1s'")
	}
	if _, err := capacity.ParseSLO(slo); err != nil {
		return sloFlagError("--find-capacity", err)
	}
	cf := &capacityFlags{slo: slo, axis: live.AxisConcurrency, goodput: analyze.DefaultSLO.String(), timeScale: 1}
	if fs.Changed("concurrency") {
		for _, c := range cfg.Concurrency {
			if c < 1 || c > live.MaxUsers {
				return usagef("--concurrency %d: with --find-capacity give levels from 1 to %d (the lowest and highest bound the search)", c, live.MaxUsers)
			}
		}
		cf.rng = fmt.Sprintf("%d:%d", slices.Min(cfg.Concurrency), slices.Max(cfg.Concurrency))
	}
	return runCapacity(cmd, capacityRun{f: f, cf: cf, shape: shape, profile: profile, profileSet: fs.Changed("profile"),
		inputTokens: cfg.InputTokens[0], maxTokens: cfg.MaxTokens, tokenizer: cfg.Tokenizer, results: cfg.Results})
}
