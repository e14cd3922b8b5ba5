package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	fs.StringVar(&tok, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
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
