package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// errGivenTwice is a single-value flag's second value; FlagError says it
// with the flag's name.
var errGivenTwice = errors.New("given twice: it takes one value, give it once")

// SingleValueFlags makes a repeated single-value flag of c and its
// subcommands an error: pflag keeps the last of `--max-tokens 100
// --max-tokens 200` silently, which hides a typo in a long command line.
// List flags (slices, arrays, counts) keep accumulating.
func SingleValueFlags(c *cobra.Command) {
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if _, done := f.Value.(*onceValue); done {
				return
			}
			if t := f.Value.Type(); strings.Contains(t, "Slice") || strings.Contains(t, "Array") || t == "count" {
				return
			}
			if f.Value.Type() == "duration" && f.DefValue == "0s" {
				// pflag recognises a zero duration default by its own type,
				// which the wrapper hides; "0" keeps help free of "(default 0s)".
				f.DefValue = "0"
			}
			f.Value = &onceValue{Value: f.Value}
		})
	}
	for _, sub := range c.Commands() {
		SingleValueFlags(sub)
	}
}

// Underlying is the flag value SingleValueFlags wrapped, to set a value
// the program derives from the one the user gave once; v itself when it
// is not wrapped.
func Underlying(v pflag.Value) pflag.Value {
	if once, ok := v.(*onceValue); ok {
		return once.Value
	}
	return v
}

// onceValue refuses a second Set.
type onceValue struct {
	pflag.Value
	set bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return errGivenTwice
	}
	v.set = true
	return v.Value.Set(s)
}
