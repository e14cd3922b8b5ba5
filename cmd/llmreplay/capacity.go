package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/report"
	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/replay"
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
		Use:   "capacity --slo SLO [--url URL] [flags]",
		Short: "How much load a server takes while an SLO holds: the largest concurrency (or request rate) meeting it, with its interval",
		Long: `capacity searches for the largest load meeting an SLO: closed-loop users
(--axis concurrency) or open-loop requests per second (--axis rate). It
probes the lowest level, doubles until a level fails (or the highest
passes), then bisects to --resolution. Each probe runs independent rounds,
each from an idle server (concurrency C: every user sends 1 + max(2,
ceil(20/C)) requests, its first skipped; rate: rate x --round-duration
requests), and judges the level by the median over its rounds of each
round's own percentile with its 99% order-statistic interval: 8 rounds,
up to 12 while that interval straddles a bound. The answer is the
largest level judged to meet the SLO with the 95% interval no decided probe
ruled out, then the knee of aggregate throughput (the lowest level reaching
90% of the highest throughput probed). docs/CAPACITY.md defines them.

Every probe round is a phase of ONE trace (rewritten after each round, so a
crash keeps the rounds that finished); 'capacity --from TRACE --slo …'
answers again for any other SLO without sending a request, and 'analyze'
reads the trace like any other (its rows are the probed levels).

When the budget (--max-requests, --max-duration) ends the search first, or
the server fails more than 5% of a probe's requests before the SLO binds,
the answer is "could not determine" with the bracket and the reason, and
the exit status is 1.

Without --url it searches llmreplay's SIMULATED server (--profile), and
--time-scale 0.1 runs the profile ten times faster with the SLO bounds
scaled alike (the answer is the same; the latencies shown are scaled).`,
		Example: `  # the built-in simulator, ten times faster than real time
  llmreplay capacity --profile llamacpp-rtx5090-q4km --time-scale 0.1 --slo 'ttft_p90<=1s'

  # a real server, two bounds, a budget
  llmreplay capacity --url http://127.0.0.1:8000 --slo 'ttft_p90<=2s,tpot_p90<=50ms' --max-requests 2000

  # the rate axis, a goodput SLO
  llmreplay capacity --url http://127.0.0.1:8000 --axis rate --range 0.5:20 --slo 'goodput>=95%'

  # the same trace, another SLO, nothing sent
  llmreplay capacity --from results/NAME.trace.zst --slo 'ttft_p90<=500ms'`,
		Args: cobra.NoArgs,
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
	fs.StringVar(&f.url, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&profile, "profile", bench.DefaultProfile, "simulator profile when no --url ("+strings.Join(profileNames(), ", ")+")")
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

func runCapacity(cmd *cobra.Command, o capacityRun) error {
	f, cf := o.f, o.cf
	sc, good, err := cf.search()
	if err != nil {
		return err
	}
	if f.url != "" && o.profileSet {
		return usagef("--profile applies to the built-in simulator only: drop it, or drop --url")
	}
	if f.url != "" && cf.timeScale != 1 {
		return usagef("--time-scale applies to the built-in simulator only: drop it, or drop --url")
	}
	if !(cf.timeScale > 0 && cf.timeScale <= 1) {
		return usagef("--time-scale %g: use a factor above 0 and at most 1 (0.1 runs ten times faster)", cf.timeScale)
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"input-tokens", o.inputTokens}, {"max-tokens", o.maxTokens}} {
		if n.v < 1 || n.v > workload.MaxInputTokens {
			return usagef("--%s %d: give 1 to %d", n.flag, n.v, workload.MaxInputTokens)
		}
	}
	rc, err := f.config(nil, "")
	if err != nil {
		return err
	}
	rc.Tokenizer = o.tokenizer
	errw, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	path := cf.out
	if cf.resume != "" && path == "" {
		path = cf.resume
	}
	if path == "" {
		if err := os.MkdirAll(o.results, 0o755); err != nil {
			return folderError("--results", o.results, fmt.Errorf("cannot create the results folder %s: %w", o.results, err))
		}
		label := rc.Label
		if label == "" && f.url == "" {
			label = "sim " + o.profile
		}
		path = live.DefaultTracePath(o.results, label, rc.Model, time.Now())
	}
	if err := checkOutPath(path); err != nil {
		return err
	}
	if cf.report != "" {
		if err := outfile.Check(cf.report, cf.force, path); err != nil {
			return usagef("--report: %v", err)
		}
	}
	// The trace file is claimed before anything is sent, so that neither
	// an existing file nor another run started in the same second (the
	// default name is timestamped to the second) is replaced when the
	// first probe round is written; a claim no round filled is removed.
	claimed := false
	switch {
	case path == cf.resume:
		// --resume grows its own trace in place.
	case cf.out == "":
		if path, err = claimDefault(path); err != nil {
			return err
		}
		claimed = true
	case cf.force:
		if err := outfile.Check(path, true, cf.resume); err != nil {
			return usagef("-o: %v", err)
		}
	default:
		if err := outfile.Check(path, false, cf.resume); err != nil {
			return usagef("-o: %v", err)
		}
		if err := outfile.Claim(path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return usagef("-o: cannot write %s: it exists; pass --force to replace it, or choose another output name", path)
			}
			return usagef("-o %s: %v", path, err)
		}
		claimed = true
	}
	if claimed {
		defer func() {
			if !traceWritten(path) {
				os.Remove(path)
			}
		}()
	}
	lc := live.Config{Replay: rc, Search: sc, Axis: cf.axis, InputTokens: o.inputTokens, MaxTokens: o.maxTokens,
		Tokenizer: o.tokenizer, Shape: workload.Shape(o.shape), GoodputBounds: good, TimeScale: cf.timeScale, RoundDuration: cf.roundDuration, Trace: path, Resume: cf.resume}
	if f.url == "" {
		lc.Profile = o.profile
	}
	if _, err := lc.Resolve(); err != nil {
		return usageError(err)
	}
	if f.url == "" {
		fmt.Fprintf(errw, "no --url: searching llmreplay's SIMULATED server, profile %s (figures are the model's, not a real engine's)\n", o.profile)
	}
	if !f.quiet {
		lc.OnProbe = func(x float64, round int, s *replay.Summary) {
			fmt.Fprintf(errw, "probe %s, round %d: %s\n", levelWords(cf.axis, x), round, s)
		}
	}
	res, err := live.Run(cmd.Context(), lc)
	if res == nil {
		if err != nil {
			if cf.resume != "" && strings.HasPrefix(err.Error(), "--resume") {
				return usageError(err)
			}
			return usageErrorIfInput(flagError(err))
		}
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
	server := res.URL
	if res.Simulated {
		server = "SIMULATED (profile " + res.Profile + ")"
	} else if res.Model != "" {
		server += " (model " + safetext.Show(res.Model) + ")"
	}
	fmt.Fprintf(out, "server: %s\n", server)
	writeCapacity(out, res.Result, cf.axis, lc.Search.SLO, res.Search, cf.timeScale)
	if res.Simulated {
		if w := simBusyWarning(res.MeanStepLag(), res.Search.SLO); w != "" {
			fmt.Fprintln(out, w)
		}
	}
	if written {
		fmt.Fprintf(errw, "trace: %s (answer again for another SLO: llmreplay capacity --from %s --slo '…')\n", res.Trace, res.Trace)
	}
	if cf.report != "" && len(res.Probes) > 0 {
		if rerr := writeCapacityReport(cf.report, res.Trace, res.Result, cf.axis, res.Search); rerr != nil {
			return rerr
		}
		fmt.Fprintf(errw, "report: %s\n", cf.report)
	}
	if err != nil {
		if cmd.Context().Err() != nil {
			if !written {
				return &exitError{code: 130, err: errors.New("stopped before any probe round finished: no trace written")}
			}
			return &exitError{code: 130, err: fmt.Errorf("stopped: %s holds every probe round that finished", res.Trace)}
		}
		return fmt.Errorf("%v (the trace %s holds every probe round that finished)", err, res.Trace)
	}
	return undetermined(res.Result)
}

// checkOutPath refuses a trace path in a folder that does not exist,
// before anything is sent.
func checkOutPath(path string) error {
	dir := path[:max(0, strings.LastIndexByte(path, '/'))]
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("-o %s: the folder %s does not exist: create it first", path, dir)
	}
	return nil
}

// claimDefault claims the default trace path, or, when a run started in
// the same second holds it, the first free NAME-2, NAME-3, ….
func claimDefault(path string) (string, error) {
	const ext = ".capacity.trace.zst"
	stem, err := outfile.ClaimNumbered(strings.TrimSuffix(path, ext), ext)
	switch {
	case errors.Is(err, fs.ErrExist):
		return "", usagef("cannot name the trace: %v; choose another --results folder or -o", err)
	case err != nil:
		return "", usagef("%v; choose another --results folder", err)
	}
	return stem + ext, nil
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
	out := cmd.OutOrStdout()
	h := r.Header
	server := replay.RedactURL(h.URL)
	if h.Simulated {
		server = "SIMULATED (profile " + h.SimProfile + ")"
	}
	fmt.Fprintf(out, "trace: %s\nserver: %s, measured %s\n", safetext.Show(cf.from), safetext.Show(server), safetext.Show(h.StartWall))
	if r.Partial {
		fmt.Fprintln(out, "the trace is cut short (the run was stopped or crashed): its complete records are used")
	}
	orig := slo
	if orig == nil {
		orig, _ = capacity.ParseSLO(h.Options[live.OptSLO])
	}
	writeCapacity(out, r.Result, r.Axis, orig, r.Search, r.TimeScale)
	if cf.report != "" {
		if err := writeCapacityReport(cf.report, cf.from, r.Result, r.Axis, r.Search); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "report: %s\n", cf.report)
	}
	return undetermined(r.Result)
}

func levelWords(axis string, x float64) string {
	if axis == live.AxisRate {
		return strconv.FormatFloat(x, 'f', -1, 64) + " req/s"
	}
	if x == 1 {
		return "1 user"
	}
	return strconv.Itoa(int(x)) + " users"
}

// sloText writes an SLO from its bounds (a scaled SLO's text would
// still show the unscaled bound).
func sloText(slo capacity.SLO) string {
	var t []string
	for _, x := range slo {
		if x.Share {
			t = append(t, x.Text)
			continue
		}
		t = append(t, fmt.Sprintf("%s%s<=%v", x.Metric, pct(x), time.Duration(math.Round(x.Bound*1e6))))
	}
	return strings.Join(t, ",")
}

// termValue shows a term's value or interval end.
func termValue(t capacity.Term, v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if t.Share {
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	}
	return analyze.FormatMs(v, false) + " ms"
}

// writeCapacity prints the probes, the answer and the knee.
func writeCapacity(w io.Writer, r *capacity.Result, axis string, slo capacity.SLO, sc capacity.Config, scale float64) {
	fmt.Fprintf(w, "SLO: %s", sloText(slo))
	if scale != 1 {
		fmt.Fprintf(w, " (simulator time scale %g: bounds scaled alike to %s; latencies below are at that scale)", scale, sloText(sc.SLO))
	}
	fmt.Fprintf(w, "\n\n")
	unit := "users"
	if axis == live.AxisRate {
		unit = "req/s"
	}
	fmt.Fprintf(w, "%-8s %8s %6s  %-9s", unit, "requests", "failed", "verdict")
	for _, t := range sc.SLO {
		fmt.Fprintf(w, "  %-30s", t.Metric+pct(t)+" [99% interval]")
	}
	fmt.Fprintf(w, "  %s\n", "aggregate tok/s")
	probes := append([]capacity.Probe(nil), r.Probes...)
	sortProbes(probes)
	for _, p := range probes {
		fmt.Fprintf(w, "%-8s %8d %6d  %-9s", strconv.FormatFloat(p.X, 'f', -1, 64), p.Requests, p.Failed, p.Verdict)
		for i, t := range sc.SLO {
			cell := "–"
			if i < len(p.Terms) {
				tr := p.Terms[i]
				cell = fmt.Sprintf("%s [%s, %s]", termValue(t, tr.Value), termValue(t, tr.Lo), termValue(t, tr.Hi))
			}
			fmt.Fprintf(w, "  %-30s", cell)
		}
		fmt.Fprintf(w, "  %.0f\n", p.TPS)
	}
	fmt.Fprintln(w)
	what := "max concurrency meeting the SLO"
	if axis == live.AxisRate {
		what = "max request rate meeting the SLO"
	}
	num := func(x float64) string {
		if axis == live.AxisRate {
			return strconv.FormatFloat(x, 'f', -1, 64) + " req/s"
		}
		return strconv.Itoa(int(x))
	}
	interval := func() string {
		if r.Lo == r.Hi {
			return num(r.Lo)
		}
		if axis == live.AxisRate {
			return fmt.Sprintf("%g–%g req/s", r.Lo, r.Hi)
		}
		return fmt.Sprintf("%d–%d", int(r.Lo), int(r.Hi))
	}
	switch r.Outcome {
	case capacity.Found:
		fmt.Fprintf(w, "%s: %s (95%% interval %s)\n", what, num(r.Answer), interval())
		for _, p := range probes {
			if p.X == r.Answer {
				fmt.Fprintf(w, "  at %s:", num(p.X))
				for i, t := range sc.SLO {
					if i < len(p.Terms) {
						fmt.Fprintf(w, " %s%s %s,", t.Metric, pct(t), termValue(t, p.Terms[i].Value))
					}
				}
				fmt.Fprintf(w, " aggregate %.0f tok/s\n", p.TPS)
			}
		}
	case capacity.NoneMeets:
		fmt.Fprintf(w, "%s: none in the range (%s)\n", what, r.Reason)
	case capacity.AllMeet:
		fmt.Fprintf(w, "%s: at least %s, the top of the range (%s); raise --range to find the limit\n", what, num(r.Answer), r.Reason)
	case capacity.Budget:
		best := "best so far " + num(r.Answer)
		if r.Lo == 0 {
			// No probe passed: the range's low end is no answer yet.
			best = "no level shown to meet it yet"
		}
		fmt.Fprintf(w, "%s: could not determine (%s); it lies in %s (%s)\n", what, r.Reason, interval(), best)
	case capacity.NoDecision:
		fmt.Fprintf(w, "%s: could not determine: %s; they rule out no level of the tested range %s (best guess by point estimates %s)\n", what, r.Reason, interval(), num(r.Answer))
	case capacity.ErrorsHit:
		fmt.Fprintf(w, "%s: could not determine: errors came first: %s (limit %g%% per probe)", what, r.Reason, 100*sc.MaxErrorRate)
		if r.Answer >= sc.Lo && r.Lo >= sc.Lo {
			fmt.Fprintf(w, "; the SLO held up to %s", num(r.Lo))
		}
		fmt.Fprintln(w)
	}
	k := r.Knee
	switch {
	case k.Found && k.Lo > 0:
		fmt.Fprintf(w, "knee of aggregate throughput: %s (between %s and %s): %.0f tok/s, %.0f%% of the highest probed (%.0f tok/s)\n",
			num(k.X), num(k.Lo), num(k.X), k.TPS, 100*k.TPS/k.MaxTPS, k.MaxTPS)
	case k.Found:
		fmt.Fprintf(w, "knee of aggregate throughput: at or below %s (%s): %.0f tok/s\n", num(k.X), k.Reason, k.TPS)
	default:
		fmt.Fprintf(w, "knee of aggregate throughput: not found (%s)\n", k.Reason)
	}
	// Which limit comes first: when the knee lies below the SLO's answer,
	// the server stops adding throughput before latency binds; load past
	// the knee buys queueing, not tokens.
	if k.Found && k.Lo > 0 && (r.Outcome == capacity.Found || r.Outcome == capacity.AllMeet) && k.X < r.Answer {
		fmt.Fprintf(w, "the server saturates first: aggregate throughput stops rising at the knee (%s), below the SLO's limit (%s); load past the knee adds waiting, not tokens\n", num(k.X), num(r.Answer))
	}
	sweep := 0
	if axis == live.AxisConcurrency {
		// The range is at most live.MaxUsers: --range and Reanalyse
		// (a trace's header) refuse more.
		if rc, err := sc.Resolve(); err == nil {
			// The same per-level confidence: every level's probe at its
			// fewest rounds (8 at 99% when rounds are judged on their
			// own, one pooled batch before that).
			for c := int(rc.Lo); c <= int(rc.Hi); c++ {
				if rc.PerRound {
					sweep += capacity.MinRounds(rc.Conf) * live.ClosedRoundMeasured(c, rc.Batch)
				} else {
					sweep += rc.Batch
				}
			}
		}
	}
	levels := "levels"
	if len(probes) == 1 {
		levels = "level"
	}
	fmt.Fprintf(w, "searched %d %s with %s measured requests", len(probes), levels, analyze.GroupDigits(int64(r.Requests)))
	if r.Elapsed > 0 {
		fmt.Fprintf(w, " in %.1fs", r.Elapsed.Seconds())
	}
	if sweep > 0 {
		fmt.Fprintf(w, " (a full %g..%g sweep at the same per-level confidence: %s)", sc.Lo, sc.Hi, analyze.GroupDigits(int64(sweep)))
	}
	fmt.Fprintln(w)
}

func pct(t capacity.Term) string {
	if t.Share {
		return ""
	}
	return "_p" + strconv.FormatFloat(100*t.Q, 'f', -1, 64)
}

func sortProbes(ps []capacity.Probe) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].X < ps[j-1].X; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
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
	if fs.Changed("concurrency") {
		for _, c := range cfg.Concurrency {
			if c < 1 || c > live.MaxUsers {
				return usagef("--concurrency %d: with --find-capacity give levels from 1 to %d (the lowest and highest bound the search)", c, live.MaxUsers)
			}
		}
	}
	cf := &capacityFlags{slo: slo, axis: live.AxisConcurrency, goodput: analyze.DefaultSLO.String(), timeScale: 1}
	if fs.Changed("concurrency") {
		lo, hi := cfg.Concurrency[0], cfg.Concurrency[0]
		for _, c := range cfg.Concurrency {
			lo, hi = min(lo, c), max(hi, c)
		}
		cf.rng = fmt.Sprintf("%d:%d", lo, hi)
	}
	return runCapacity(cmd, capacityRun{f: f, cf: cf, shape: shape, profile: profile, profileSet: fs.Changed("profile"),
		inputTokens: cfg.InputTokens[0], maxTokens: cfg.MaxTokens, tokenizer: cfg.Tokenizer, results: cfg.Results})
}

// writeCapacityReport writes the HTML report of a capacity trace with its
// capacity charts first (capacityCharts).
func writeCapacityReport(path, tracePath string, r *capacity.Result, axis string, sc capacity.Config) error {
	ar, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: tracePath})
	if err != nil {
		return err
	}
	charts := capacityCharts(r, axis, sc, "", "")
	var page strings.Builder
	if err := report.Write(&page, ar, report.Options{Title: "llmreplay capacity", When: time.Now().UTC().Format(time.RFC3339), Extra: charts}); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(page.String()))
}

// capacityNote is the answer in one line, under the chart.
func capacityNote(r *capacity.Result, axis string) string {
	unit := " users"
	if axis == live.AxisRate {
		unit = " req/s"
	}
	switch r.Outcome {
	case capacity.Found:
		return fmt.Sprintf("Answer: %g%s (95%% interval %g–%g).", r.Answer, unit, r.Lo, r.Hi)
	case capacity.AllMeet:
		return fmt.Sprintf("Every level up to %g%s meets the SLO.", r.Answer, unit)
	case capacity.NoneMeets:
		return "No level in the range meets the SLO."
	case capacity.NoDecision:
		return fmt.Sprintf("Could not determine: %s; they rule out no level of the tested range %g–%g%s.", r.Reason, r.Lo, r.Hi, unit)
	}
	return fmt.Sprintf("Could not determine: %s; the capacity lies in %g–%g%s.", r.Reason, r.Lo, r.Hi, unit)
}

// simBusyShare is the built-in simulator's mean step lag, as a share of
// the SLO's tightest time bound, past which its answer is the machine's:
// capacity/live's coverage tests leave such runs out (busyShare there).
const simBusyShare = 0.05

// simBusyWarning says when the built-in simulator could not keep its
// model's pace: its engine steps ended late by lag on average, and every
// latency the search judged was that much longer than the model's, so
// the answer can end below the model's capacity. slo is the search's
// (scaled) SLO. "" when the lag is within simBusyShare of the tightest
// time bound, or the SLO has none.
func simBusyWarning(lag time.Duration, slo capacity.SLO) string {
	tightest := 0.0
	for _, t := range slo {
		if !t.Share && (tightest == 0 || t.Bound < tightest) {
			tightest = t.Bound
		}
	}
	if tightest <= 0 || lag <= 0 {
		return ""
	}
	bound := time.Duration(tightest * float64(time.Millisecond))
	if float64(lag) <= simBusyShare*float64(bound) {
		return ""
	}
	return fmt.Sprintf("warning: the simulator ran behind its model: its engine steps ended %v late on average, %.0f%% of the tightest SLO bound (%v as run); this machine was too busy to keep the model's pace, so every latency read longer than the model's and the answer may be below its capacity; rerun on a quieter machine",
		lag.Round(10*time.Microsecond), 100*float64(lag)/float64(bound), bound)
}
