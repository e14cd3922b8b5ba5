package live

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

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

// Settings is a capacity search as a person states it: the SLO, the
// goodput bounds and the range as text, the trace as a path or a folder
// to name one in. Config, Claim and Answer check every value before
// anything starts; their errors name the setting's field (fielderr), so
// a command line says them with its flags.
type Settings struct {
	SLO           string // e.g. "ttft_p90<=1s,tpot_p90<=50ms" (capacity.ParseSLO)
	GoodputBounds string // "": analyze.DefaultSLO for a run, the trace's own for Answer
	Axis          string // AxisConcurrency or AxisRate
	Range         string // "LOW:HIGH"; "": 1:64 users or 0.5:32 requests/s
	Resolution    float64
	MaxRequests   int
	MaxDuration   time.Duration
	RoundDuration time.Duration
	TimeScale     float64

	URL         string // the server; "" runs the built-in simulator
	Profile     string // the simulator's profile ("": the default); refused with URL
	InputTokens int
	MaxTokens   int
	Tokenizer   string
	Shape       string

	Results string // the folder a trace named by label and time goes in
	Out     string // the trace's path, instead
	Resume  string // a stopped search's trace, to continue in place
	Report  string // an HTML report to write as well
	Force   bool   // replace Out or Report
	From    string // the capacity trace Answer decides again from
}

func settingErr(field, format string, args ...any) error {
	return fielderr.Newf("live: Settings", field, format, args...)
}

// search is the search's configuration and the goodput bounds.
func (s Settings) search() (capacity.Config, analyze.SLO, error) {
	var c capacity.Config
	if strings.TrimSpace(s.SLO) == "" {
		return c, analyze.SLO{}, settingErr("SLO", "no {SLO}: give the bound the load must meet, e.g. {SLO} 'ttft_p90<=1s'")
	}
	slo, good, err := s.slos()
	if err != nil {
		return c, good, err
	}
	if s.GoodputBounds == "" {
		good = analyze.DefaultSLO
	}
	c.SLO = slo
	switch s.Axis {
	case AxisConcurrency:
		c.Lo, c.Hi, c.Resolution = 1, 64, 1
	case AxisRate:
		c.Lo, c.Hi, c.Resolution = 0.5, 32, 0.25
	default:
		return c, good, settingErr("Axis", "{Axis} %q: use concurrency or rate", s.Axis)
	}
	if s.Range != "" {
		lo, hi, ok := strings.Cut(s.Range, ":")
		l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		switch users := s.Axis == AxisConcurrency; {
		case !ok || err1 != nil || err2 != nil:
			return c, good, settingErr("Range", "{Range} %q: write LOW:HIGH, e.g. {Range} 1:64", s.Range)
		case !(l > 0) || !(h >= l) || math.IsInf(h, 0):
			return c, good, settingErr("Range", "{Range} %q is empty: give 0 < LOW <= HIGH", s.Range)
		case users && math.Floor(h) < math.Ceil(l):
			return c, good, settingErr("Range", "{Range} %q holds no whole number of users", s.Range)
		case users && h > MaxUsers:
			return c, good, settingErr("Range", "{Range} %q: use at most %d users", s.Range, MaxUsers)
		}
		c.Lo, c.Hi = l, h
	}
	switch {
	case s.Resolution < 0:
		return c, good, settingErr("Resolution", "{Resolution} %g: give a positive step", s.Resolution)
	case s.Resolution > 0:
		c.Resolution = s.Resolution
	}
	if s.MaxRequests < 0 || s.MaxDuration < 0 {
		return c, good, settingErr("MaxRequests", "{MaxRequests} and {MaxDuration}: give 0 (no limit) or more")
	}
	c.MaxRequests, c.MaxDuration = s.MaxRequests, s.MaxDuration
	if s.RoundDuration < 0 {
		return c, good, settingErr("RoundDuration", "{RoundDuration} %v: give a positive duration", s.RoundDuration)
	}
	_, err = c.Resolve()
	return c, good, err
}

// slos parses the SLO and the goodput bounds given (either may be empty:
// then it is nil, or zero).
func (s Settings) slos() (slo capacity.SLO, good analyze.SLO, err error) {
	if strings.TrimSpace(s.SLO) != "" {
		if slo, err = capacity.ParseSLO(s.SLO); err != nil {
			return nil, good, settingErr("SLO", "{SLO}: %v", err)
		}
	}
	if s.GoodputBounds != "" {
		if good, err = analyze.ParseSLO(s.GoodputBounds); err != nil {
			if fe := fielderr.As(err); fe != nil && fe.Field == "SLO" {
				return nil, good, settingErr("GoodputBounds", "{GoodputBounds} %s: %s", fe.Problem, fe.Fix)
			}
			return nil, good, settingErr("GoodputBounds", "{GoodputBounds}: %v", err)
		}
	}
	return slo, good, nil
}

// Config checks the settings of a search to run and turns them into its
// Config, without its endpoint (Replay) and trace, which Claim sets.
func (s Settings) Config() (Config, error) {
	sc, good, err := s.search()
	if err != nil {
		return Config{}, err
	}
	switch {
	case s.URL != "" && s.Profile != "":
		return Config{}, settingErr("Profile", "{Profile} applies to the built-in simulator only: drop it, or drop {URL}")
	case s.URL != "" && s.TimeScale != 1:
		return Config{}, settingErr("TimeScale", "{TimeScale} applies to the built-in simulator only: drop it, or drop {URL}")
	case !(s.TimeScale > 0 && s.TimeScale <= 1):
		return Config{}, settingErr("TimeScale", "{TimeScale} %g: use a factor above 0 and at most 1 (0.1 runs ten times faster)", s.TimeScale)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"InputTokens", s.InputTokens}, {"MaxTokens", s.MaxTokens}} {
		if n.v < 1 || n.v > workload.MaxInputTokens {
			return Config{}, settingErr(n.field, "{"+n.field+"} %d: give 1 to %d", n.v, workload.MaxInputTokens)
		}
	}
	c := Config{Search: sc, Axis: s.Axis, InputTokens: s.InputTokens, MaxTokens: s.MaxTokens, Tokenizer: s.Tokenizer,
		Shape: workload.Shape(s.Shape), GoodputBounds: good, TimeScale: s.TimeScale, RoundDuration: s.RoundDuration, Resume: s.Resume}
	if s.URL == "" {
		c.Profile = orDefault(s.Profile, DefaultProfile)
	}
	return c, nil
}

// DefaultProfile is the simulator profile a search without a URL runs.
const DefaultProfile = sim.DefaultProfile

// Claim sets c's endpoint and chooses the trace's path (Out, Resume's
// trace, or a new name under Results), and claims it before anything is
// sent, so that neither an existing file nor another run started in the
// same second (the default name is timestamped to the second) is
// replaced when the first probe round is written; release removes a claim
// no round filled.
func (s Settings) Claim(c *Config, rc replay.Config, now time.Time) (release func(), err error) {
	c.Replay = rc
	path := s.Out
	if s.Resume != "" && path == "" {
		path = s.Resume
	}
	if path == "" {
		if err := os.MkdirAll(s.Results, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create the results folder %s: %w", s.Results, err)
		}
		label := rc.Label
		if label == "" && rc.URL == "" {
			label = "sim " + c.Profile
		}
		path = DefaultTracePath(s.Results, label, rc.Model, now)
	}
	c.Trace = path
	if dir := path[:max(0, strings.LastIndexByte(path, '/'))]; dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, settingErr("Out", "{Out} %s: the folder %s does not exist: create it first", path, dir)
		}
	}
	if err := s.checkReport(path); err != nil {
		return nil, err
	}
	return s.claim(c, path)
}

func (s Settings) claim(c *Config, path string) (release func(), err error) {
	switch {
	case path == s.Resume:
		return func() {}, nil // Resume grows its own trace in place.
	case s.Out == "":
		const ext = ".capacity.trace.zst"
		stem, err := outfile.ClaimNumbered(strings.TrimSuffix(path, ext), ext)
		switch {
		case errors.Is(err, fs.ErrExist):
			return nil, settingErr("Results", "cannot name the trace: %v; choose another {Results} folder or {Out}", err)
		case err != nil:
			return nil, settingErr("Results", "%v; choose another {Results} folder", err)
		}
		c.Trace = stem + ext
		return outfile.Claimed(c.Trace), nil
	}
	if err := outfile.Check(path, s.Force, s.Resume); err != nil {
		return nil, settingErr("Out", "{Out}: %v", err)
	}
	if s.Force {
		return func() {}, nil
	}
	if err := outfile.Claim(path); errors.Is(err, fs.ErrExist) {
		return nil, settingErr("Out", "{Out}: cannot write %s: it exists; pass {Force} to replace it, or choose another output name", path)
	} else if err != nil {
		return nil, settingErr("Out", "{Out} %s: %v", path, err)
	}
	return outfile.Claimed(path), nil
}

// checkReport refuses a Report that would replace input or an existing
// file (unless Force).
func (s Settings) checkReport(input string) error {
	if s.Report == "" {
		return nil
	}
	if err := outfile.Check(s.Report, s.Force, input); err != nil {
		return settingErr("Report", "{Report}: %v", err)
	}
	return nil
}

// SLOs are the SLO and goodput bounds Answer decides for: nil and zero
// when not given (the trace's own).
func (s Settings) SLOs() (capacity.SLO, analyze.SLO, error) { return s.slos() }

// Answer decides again from the capacity trace From for slo and good
// (SLOs), sending nothing, after checking that Report may be written.
func (s Settings) Answer(slo capacity.SLO, good analyze.SLO) (*Reanalysis, error) {
	if err := s.checkReport(s.From); err != nil {
		return nil, err
	}
	return Reanalyse(s.From, slo, good)
}

// Written reports whether a probe round has been written to the run's
// trace: the file a claim left empty holds none.
func (r *Result) Written() bool {
	st, err := os.Stat(r.Trace)
	return err == nil && st.Size() > 0
}

// WriteAll writes the answer to w and, to notes, the trace that holds
// it (when a round was written) and the report written to report (when
// asked and a probe ran).
func (r *Result) WriteAll(w, notes io.Writer, report string) error {
	r.WriteText(w)
	if r.Written() {
		fmt.Fprintf(notes, "trace: %s (answer again for another SLO: llmreplay capacity --from %s --slo '…')\n", r.Trace, r.Trace)
	}
	if report == "" || len(r.Probes) == 0 {
		return nil
	}
	return writeReport(notes, report, r.Trace, r.Shown())
}

// WriteAll writes the answer again from the trace at path for the SLO
// asked to w, and the report written to report, when asked, to notes.
func (r *Reanalysis) WriteAll(w, notes io.Writer, path string, asked capacity.SLO, report string) error {
	r.WriteText(w, path, asked)
	if report == "" {
		return nil
	}
	return writeReport(notes, report, path, r.Shown(asked))
}

func writeReport(notes io.Writer, report, trace string, a capacity.Answer) error {
	if err := capacity.WriteReport(report, trace, a); err != nil {
		return err
	}
	fmt.Fprintf(notes, "report: %s\n", report)
	return nil
}

// ViewsOf is Views for an SLO written as text ("": each trace's own):
// the capacity traces among analyze's and report's inputs, judged again.
// An SLO asked of inputs that hold no capacity trace is refused.
func ViewsOf(inputs []string, sloText string, good analyze.SLO, notes io.Writer) ([]capacity.View, error) {
	var slo capacity.SLO
	if strings.TrimSpace(sloText) != "" {
		var err error
		if slo, err = capacity.ParseSLO(sloText); err != nil {
			return nil, fielderr.Newf("live", "CapacitySLO", "{CapacitySLO}: %v", err)
		}
	}
	views, err := Views(inputs, slo, good, notes)
	if err != nil {
		return nil, err
	}
	if slo != nil && len(views) == 0 {
		return nil, fielderr.Newf("live", "CapacitySLO", "{CapacitySLO}: none of the traces is a capacity trace (made by 'llmreplay capacity'): drop the flag or give such a trace")
	}
	return views, nil
}
