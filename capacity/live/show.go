package live

import (
	"fmt"
	"io"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
)

// Shown is the run's answer as capacity shows it.
func (r *Result) Shown() capacity.Answer {
	return capacity.Answer{Result: r.Result, Axis: r.Axis, SLO: r.SLO, Search: r.Search, TimeScale: r.TimeScale}
}

// WriteText writes the server searched, the answer (capacity.Answer's
// text) and, when the built-in simulator fell behind its model, the
// warning that says so.
func (r *Result) WriteText(w io.Writer) {
	server := r.URL
	if r.Simulated {
		server = "SIMULATED (profile " + r.Profile + ")"
	} else if r.Model != "" {
		server += " (model " + safetext.Show(r.Model) + ")"
	}
	fmt.Fprintf(w, "server: %s\n", server)
	r.Shown().WriteText(w)
	if r.Simulated {
		if msg := busyWarning(r.MeanStepLag(), r.Search.SLO); msg != "" {
			fmt.Fprintln(w, msg)
		}
	}
}

// busyShare is the built-in simulator's mean step lag, as a share of the
// SLO's tightest time bound, past which its answer is the machine's: the
// run's output warns, and the coverage tests leave such runs out.
const busyShare = 0.05

// busyWarning says when the built-in simulator could not keep its model's
// pace: its engine steps ended late by lag on average, and every latency
// the search judged was that much longer than the model's, so the answer
// can end below the model's capacity. slo is the search's (scaled) SLO.
// "" when the lag is within busyShare of the tightest time bound, or the
// SLO has none.
func busyWarning(lag time.Duration, slo capacity.SLO) string {
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
	if float64(lag) <= busyShare*float64(bound) {
		return ""
	}
	return fmt.Sprintf("warning: the simulator ran behind its model: its engine steps ended %v late on average, %.0f%% of the tightest SLO bound (%v as run); this machine was too busy to keep the model's pace, so every latency read longer than the model's and the answer may be below its capacity; rerun on a quieter machine",
		lag.Round(10*time.Microsecond), 100*float64(lag)/float64(bound), bound)
}

// Announce says on notes that the search runs on the built-in simulator
// when c has no URL (its figures are the model's), and, unless quiet, has
// every probe round's line (ProbeLine) said there as the round ends.
func (c *Config) Announce(notes io.Writer, quiet bool) {
	if c.Replay.URL == "" {
		fmt.Fprintf(notes, "no --url: searching llmreplay's SIMULATED server, profile %s (figures are the model's, not a real engine's)\n", c.Profile)
	}
	if !quiet {
		c.OnProbe = func(x float64, round int, sum *replay.Summary) {
			fmt.Fprintln(notes, ProbeLine(c.Axis, x, round, sum))
		}
	}
}

// ProbeLine is a probe round's progress line.
func ProbeLine(axis string, x float64, round int, s *replay.Summary) string {
	level := capacity.Level(axis, x) + " users"
	switch {
	case axis == AxisRate:
		level = capacity.Level(axis, x)
	case x == 1:
		level = "1 user"
	}
	return fmt.Sprintf("probe %s, round %d: %s", level, round, s)
}

// Shown is the reanalysis as capacity shows it, for the SLO asked (nil:
// the trace's own).
func (r *Reanalysis) Shown(asked capacity.SLO) capacity.Answer {
	if asked == nil {
		asked, _ = capacity.ParseSLO(r.Header.Options[OptSLO])
	}
	return capacity.Answer{Result: r.Result, Axis: r.Axis, SLO: asked, Search: r.Search, TimeScale: r.TimeScale}
}

// WriteText writes which trace (path) and server were searched, and the
// answer for the SLO asked (nil: the trace's own).
func (r *Reanalysis) WriteText(w io.Writer, path string, asked capacity.SLO) {
	h := r.Header
	server := replay.RedactURL(h.URL)
	if h.Simulated {
		server = "SIMULATED (profile " + h.SimProfile + ")"
	}
	fmt.Fprintf(w, "trace: %s\nserver: %s, measured %s\n", safetext.Show(path), safetext.Show(server), safetext.Show(h.StartWall))
	if r.Partial {
		fmt.Fprintln(w, capacity.PartialNote)
	}
	r.Shown(asked).WriteText(w)
}

// IsTrace says whether path's header records a capacity search; a file
// that cannot be read is left to whoever reads it next to report.
func IsTrace(path string) bool {
	r, err := trace.Open(path)
	if err != nil {
		return false
	}
	defer r.Close()
	return r.Header().Options[OptAxis] != ""
}

// Views judges again every input (label=path or path, as analyze takes
// them) that is a capacity trace, for slo (nil: each trace's own) and
// the goodput bounds good (zero: each trace's own). What cannot be
// judged is said on notes: a trace read from stdin (it cannot be read
// twice) when slo is given, and, when slo is nil, a capacity trace that
// cannot be judged, since the ordinary analysis still stands; with slo
// given that is the error.
func Views(inputs []string, slo capacity.SLO, good analyze.SLO, notes io.Writer) ([]capacity.View, error) {
	var views []capacity.View
	for _, arg := range inputs {
		in := analyze.ParseInput(arg)
		if in.Path == "-" {
			if slo != nil {
				fmt.Fprintln(notes, "capacity: a trace read from stdin cannot be judged again: give it as a file")
			}
			continue
		}
		if !IsTrace(in.Path) {
			continue
		}
		r, err := Reanalyse(in.Path, slo, good)
		if err != nil {
			if slo == nil {
				fmt.Fprintf(notes, "capacity: no answer for %s: %s\n", safetext.Show(arg), safetext.Show(err.Error()))
				continue
			}
			return nil, err
		}
		views = append(views, capacity.View{Name: arg, Answer: r.Shown(slo), Partial: r.Partial})
	}
	return views, nil
}
