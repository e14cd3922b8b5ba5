package cli

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// Fields names the flag that sets each field of a library's
// configuration ("Schedule" → "--schedule"): the library's errors name
// the field (fielderr), the command line names the flag.
type Fields map[string]string

// With is f and more, more's names first: the table of a command whose
// settings f does not name, or names otherwise.
func (f Fields) With(more map[string]string) Fields {
	all := maps.Clone(f)
	maps.Copy(all, more)
	return all
}

// Error is err in the flags' words: a field error becomes "--flag
// PROBLEM: FIX", bad input (exit status 2); a field error with no flag is
// still bad input; any other error is returned as it is. Errors joined
// (errors.Join: a config with several wrong settings) are said each in
// the flags' words, one a line.
func (f Fields) Error(err error) error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts := slices.Clone(joined.Unwrap())
		renamed := false
		for i, p := range parts {
			if out, ok := fielderr.Rename(p, f); ok {
				parts[i], renamed = out, true
			}
		}
		if renamed {
			return Usage(errors.Join(parts...))
		}
	}
	if out, ok := fielderr.Rename(err, f); ok {
		return Usage(out)
	}
	if fielderr.As(err) != nil {
		return Usage(err)
	}
	return err
}

// Given says which fields the user typed on fs: a field is given when the
// flag f names for it (--name, or -x for a shorthand) was.
func (f Fields) Given(fs *pflag.FlagSet) fielderr.Given {
	return func(field string) bool {
		name := f[field]
		fl := fs.Lookup(strings.TrimLeft(name, "-"))
		if len(name) == 2 {
			fl = fs.ShorthandLookup(name[1:])
		}
		return fl != nil && fl.Changed
	}
}
