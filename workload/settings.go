package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/safetext"
)

// Stated applies what a person stated of c, given saying which fields
// were stated: where 0 means the default, a stated 0 is refused (it is
// not what a typed 0 means), except SaltWords, where it means none; and
// a stated setting that does not apply to the schedule is refused. Every
// other check is Build's.
func (c *BuildConfig) Stated(given fielderr.Given) error {
	for _, z := range []struct {
		field string
		zero  bool
	}{
		{"MaxTokens", c.MaxTokens == 0},
		{"Repeats", c.Repeats == 0},
		{"Requests", c.Requests == 0},
		{"TimeScale", c.TimeScale == 0},
		{"Sessions", c.Sessions == 0},
	} {
		if z.zero && given.Has(z.field) {
			return fieldErrf(z.field, "bad {"+z.field+"} 0: it must be positive (leave it out for the default)")
		}
	}
	isTrace := strings.HasPrefix(c.Schedule, KindTrace+":")
	for _, f := range []string{"InputTokens", "MaxTokens"} {
		if isTrace && given.Has(f) {
			return fieldErrf(f, "{"+f+"} does not apply to trace:FILE schedules: the log gives every request's lengths")
		}
	}
	if !isTrace && given.Has("TimeScale") {
		return fieldErrf("TimeScale", "{TimeScale} applies to trace:FILE schedules only")
	}
	switch {
	case c.SaltWords == 0 && given.Has("SaltWords"):
		c.SaltWords = NoSaltWords
	case c.SaltWords < 0 && c.SaltWords != NoSaltWords || c.SaltWords == NoSaltWords && given.Has("SaltWords"):
		return fieldErrf("SaltWords", "bad {SaltWords} %d: use 0 (no salt slot) or more", c.SaltWords)
	}
	return nil
}

func fieldErrf(field, format string, args ...any) error {
	return fielderr.Newf("workload: BuildConfig", field, format, args...)
}

// WriteJSONLines writes every request of wl as one JSON object per line,
// for jq: a prompt's bidi controls reach jq exact but a terminal as \u
// escapes.
func (wl *Workload) WriteJSONLines(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(safetext.JSONWriter(bw))
	enc.SetEscapeHTML(false)
	for i := range wl.Requests {
		if err := enc.Encode(&wl.Requests[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// VerifyText re-tokenizes every prompt of wl, read from path, with the
// tokenizer spec names (default: the workload's own) and writes to w the
// prompts whose count is off, to notes the tokenizer.json the workload
// recorded when it was used. The error is a Tokenizer field error when
// no tokenizer can be had, and a plain one when a count is off.
func VerifyText(w, notes io.Writer, path string, wl *Workload, spec string) error {
	tok, source, err := Tokenizer(wl.Header, spec)
	if err != nil {
		return fieldErrf("Tokenizer", "%s: %v ({Tokenizer} PATH)", path, err)
	}
	if source != "" && spec == "" {
		fmt.Fprintf(notes, "tokenizer: %s (recorded in the workload)\n", safetext.Show(source))
	}
	if tok.Digest() != wl.Header.TokenizerDigest {
		fmt.Fprintf(w, "note: %s is not the tokenizer the workload was built with (%s); counts may differ by a token or two\n", safetext.Show(tok.Name()), safetext.Show(wl.Header.Tokenizer))
	}
	v := Verify(wl, tok)
	v.WriteText(w, tok.Name(), len(wl.Requests))
	if len(v.Off) > 0 {
		return fmt.Errorf("%d of %d prompts are off under %s (by up to %d tokens)", len(v.Off), len(wl.Requests), tok.Name(), v.Worst)
	}
	return nil
}
