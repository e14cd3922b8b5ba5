package claim

import (
	"io"
	"os"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// SourceError is a claim Load could not read, with where it came from,
// so a command line can say it in its own words: File is "" for a claim
// given as text; Open says the file itself could not be read, Err (a
// *ParseError otherwise) says why.
type SourceError struct {
	File string
	Open bool
	Err  error
}

func (e *SourceError) Error() string {
	if e.File == "" {
		return e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}

func (e *SourceError) Unwrap() error { return e.Err }

// Load parses the claims given as texts, then those of the claims file
// (none when ""), in that order; the first that cannot be read is a
// *SourceError.
func Load(texts []string, file string) ([]Claim, error) {
	var cs []Claim
	for _, s := range texts {
		c, err := ParseClaim(s)
		if err != nil {
			return nil, &SourceError{Err: err}
		}
		cs = append(cs, c)
	}
	if file == "" {
		return cs, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, &SourceError{File: file, Open: true, Err: err}
	}
	defer f.Close()
	more, err := ParseClaims(f)
	if err != nil {
		return nil, &SourceError{File: file, Err: err}
	}
	return append(cs, more...), nil
}

// Formats are the forms check writes its verdicts in.
var Formats = []string{"text", "json"}

// CheckStated refuses what a person may state for a check but cannot be
// used: a floor of samples below 1 (0 is the default only for a Go
// caller, who leaves MinSamples out) or a format not in Formats. Its
// errors name the fields (MinSamples, Format).
func (o CheckOptions) CheckStated(format string) error {
	if o.MinSamples < 1 {
		return fielderr.Newf("claim: CheckOptions", "MinSamples", "{MinSamples} %d: give at least 1", o.MinSamples)
	}
	if format != Formats[0] && format != Formats[1] {
		return fielderr.Newf("claim: CheckOptions", "Format", "unknown {Format} %q: use text or json", format)
	}
	return nil
}

// WriteVerdicts writes vs in format: text (RenderVerdicts) or json
// (WriteVerdictsJSON).
func WriteVerdicts(w io.Writer, vs []Verdict, format string) error {
	if format == "json" {
		return WriteVerdictsJSON(w, vs)
	}
	return RenderVerdicts(w, vs)
}

// EvidenceWarnings are the warnings of res that limit the evidence
// itself, which a reader of verdicts needs before them: a trace given
// twice, a truncated one, a run that sent fewer requests than planned.
func EvidenceWarnings(res *analyze.Result) []analyze.Warning {
	var out []analyze.Warning
	for _, w := range res.Warnings {
		if w.Code == analyze.WarnDuplicateTrace || w.Code == analyze.WarnTruncated || w.Code == analyze.WarnPartial {
			out = append(out, w)
		}
	}
	return out
}
