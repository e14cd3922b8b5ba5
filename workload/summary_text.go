package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmreplay/llmreplay/internal/safetext"
)

// WriteText writes the summary as `workload inspect` prints it: the
// header's lines, then one table row per phase. Every string comes from
// the file, which may be someone else's: shown escaped, so it cannot move
// the cursor or fake a line.
func (rep Summary) WriteText(w io.Writer) {
	p := rep.Params
	e := func(v any) string { return safetext.Show(fmt.Sprint(v)) }
	fmt.Fprintf(w, "workload:   %s\n", e(rep.File))
	fmt.Fprintf(w, "format:     %s %d.%d (written by llmreplay %s)\n", e(rep.Format), rep.Major, rep.Minor, e(rep.ToolVersion))
	fmt.Fprintf(w, "digest:     %s\n", e(rep.Digest))
	fmt.Fprintf(w, "tokenizer:  %s (%s)\n", e(rep.Tokenizer), e(rep.TokenizerDigest))
	fmt.Fprintf(w, "shape:      %s, prefix %s, %d salt words, seed %d\n", e(rep.Shape), e(p.Prefix), p.SaltWords, rep.Seed)
	sched := e(rep.Schedule)
	if p.Repeats > 1 {
		sched += fmt.Sprintf(", %d repeats", p.Repeats)
	}
	if p.Arrival != "" {
		sched += ", arrival " + e(p.Arrival)
	}
	if p.Trace != "" {
		sched += fmt.Sprintf(", time scale %g", p.TimeScale)
		if p.Window != "" {
			sched += ", window " + e(p.Window)
		}
	}
	fmt.Fprintf(w, "schedule:   %s\n", sched)
	if p.Trace != "" {
		fmt.Fprintf(w, "log:        %s %s (%s)\n", e(p.TraceFormat), e(p.Trace), e(p.TraceDigest))
	}
	if p.Note != "" {
		fmt.Fprintf(w, "note:       %s\n", e(p.Note))
	}
	if p.Turns != "" {
		sessions := 0
		for _, s := range rep.Phases {
			sessions += s.Sessions
		}
		think := p.ThinkTime
		if think == "" {
			think = "0"
		}
		fmt.Fprintf(w, "sessions:   %d of %s turns, think time %s; a later turn holds its follow-up, the replay resends the conversation before it\n", sessions, e(p.Turns), e(think))
	}
	if logSessions := 0; p.Trace != "" {
		for _, s := range rep.Phases {
			if s.Context == ContextLog {
				logSessions += s.Sessions
			}
		}
		if logSessions > 0 {
			fmt.Fprintf(w, "sessions:   %d from the log's chats; each turn is its whole prompt as logged, sent at its time or when the answer before it ended, whichever is later\n", logSessions)
		}
	}
	if p.SystemTokens > 0 {
		fmt.Fprintf(w, "system:     a %d-token system prompt shared by every first turn\n", p.SystemTokens)
	}
	fmt.Fprintf(w, "requests:   %d in %s, %s\n\n", rep.Requests, counted(len(rep.Phases), "phase"), counted(rep.InputTokens, "input token"))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\tname\tkind\tconc\trate/s\trequests\tmax_tokens\tlast offset\tinput tokens")
	for _, s := range rep.Phases {
		conc, rate, last := "-", "-", "-"
		if s.Concurrency > 0 {
			conc = fmt.Sprint(s.Concurrency)
		}
		if s.Rate > 0 {
			rate = fmt.Sprintf("%g", s.Rate)
		}
		if s.Kind == KindRate || s.Kind == KindTrace {
			last = fmt.Sprintf("%.3f s", float64(s.LastOffsetNs)/1e9)
		}
		var hist []string
		for _, b := range s.InputHistogram {
			if b.Lo == b.Hi {
				hist = append(hist, fmt.Sprintf("%d×%d", b.Lo, b.Count))
			} else {
				hist = append(hist, fmt.Sprintf("%d–%d×%d", b.Lo, b.Hi, b.Count))
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", s.Index, e(s.Name), e(s.Kind), conc, rate, s.Requests, s.OutputMax, last, strings.Join(hist, " "))
	}
	tw.Flush()
}

// WriteJSON writes the summary as indented JSON, exact for jq; a bidi or
// C1 control in a string is written as a \u escape.
func (rep Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(safetext.JSONWriter(w))
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// Describe says what the workload holds in one line: its requests,
// phases and input tokens, the tokenizer and the digest.
func (w *Workload) Describe() string {
	tokens := 0
	for _, r := range w.Requests {
		tokens += r.InputTokens
	}
	return fmt.Sprintf("%s in %s, %s (%s), %s",
		counted(len(w.Requests), "request"), counted(len(w.Header.Phases), "phase"), counted(tokens, "input token"), w.Header.Tokenizer, Digest(w))
}

// WriteText writes the prompts whose count is off under the tokenizer
// named tok (the first 20, then how many more), or, when none is, that
// every one of total prompts was exact.
func (v Verification) WriteText(w io.Writer, tok string, total int) {
	for i, m := range v.Off {
		if i == 20 {
			fmt.Fprintf(w, "… and %d more\n", len(v.Off)-20)
			break
		}
		fmt.Fprintf(w, "%s: %d tokens under %s, recorded %d (%+d)\n", safetext.Show(m.ID), m.Counted, safetext.Show(tok), m.Recorded, m.Counted-m.Recorded)
	}
	if len(v.Off) == 0 {
		fmt.Fprintf(w, "verified %d prompts under %s: every count exact\n", total, safetext.Show(tok))
	}
}

// counted is "1 phase", "3 phases".
func counted(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
