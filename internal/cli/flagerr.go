package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/suggest"
)

// FlagError is a command's flag error handler (cobra's SetFlagErrorFunc):
// pflag's own errors speak Go ("invalid argument "1-8" for "--concurrency"
// flag: strconv.Atoi: parsing "1-8": invalid syntax"); this says the flag,
// the value and a form it takes, and suggests the nearest flag for an
// unknown one. Bad input: exit status 2.
func FlagError(c *cobra.Command, err error) error {
	see := fmt.Sprintf(" (see '%s --help')", c.CommandPath())
	var (
		invalid  *pflag.InvalidValueError
		missing  *pflag.ValueRequiredError
		notExist *pflag.NotExistError
	)
	switch {
	case errors.As(err, &invalid):
		return Usagef("%s%s", badFlagValue(invalid.GetFlag(), invalid.GetValue(), errors.Unwrap(invalid)), see)
	case errors.As(err, &missing) && missing.GetSpecifiedShortnames() == "":
		f := missing.GetFlag()
		return Usagef("--%s needs a value: %s%s", f.Name, acceptedForm(f), see)
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() == "":
		return Usagef("%v%s%s", err, unknownFlagHint(c, notExist.GetSpecifiedName()), see)
	}
	return Usagef("%v%s", err, see)
}

// badFlagValue is what is wrong with value for f, in the flag's words.
func badFlagValue(f *pflag.Flag, value string, cause error) string {
	name := "--" + f.Name
	if errors.Is(cause, errGivenTwice) {
		return fmt.Sprintf("%s %q: %v", name, value, cause)
	}
	var what string
	switch t := f.Value.Type(); {
	case t == "duration":
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return fmt.Sprintf("%s %q has no unit: write %ss, %sms or %sm", name, value, value, value, value)
		}
		what = "a duration"
	case t == "bool":
		return fmt.Sprintf("%s=%s: it is a switch: write %s alone to turn it on, or %s=false", name, value, name, name)
	case strings.HasPrefix(t, "int") && strings.HasSuffix(t, "Slice"), strings.HasPrefix(t, "uint") && strings.HasSuffix(t, "Slice"):
		if strings.Contains(value, "-") && !strings.HasPrefix(value, "-") {
			return fmt.Sprintf("%s %q: a range is not taken: list the values, separated by commas (%s)", name, value, acceptedForm(f))
		}
		what = "a list of whole numbers"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		if errors.Is(cause, strconv.ErrRange) {
			return fmt.Sprintf("%s %q is too large (%s)", name, value, acceptedForm(f))
		}
		what = "a whole number"
	case strings.HasPrefix(t, "float"):
		if pct, err := strconv.ParseFloat(strings.TrimSuffix(value, "%"), 64); err == nil && strings.HasSuffix(value, "%") {
			return fmt.Sprintf("%s %q: give a fraction, not a percentage: %s %v", name, value, name, pct/100)
		}
		what = "a number"
	default:
		return fmt.Sprintf("%s %q: %v", name, value, cause)
	}
	return fmt.Sprintf("%s %q is not %s: %s", name, value, what, acceptedForm(f))
}

// acceptedForm is an example of a value f takes: its default when it
// has one worth showing, else a typical value of its type.
func acceptedForm(f *pflag.Flag) string {
	name := "--" + f.Name
	def := strings.Trim(f.DefValue, "[]")
	switch t := f.Value.Type(); {
	case t == "duration":
		// time.Duration's "10m0s" as people write it: 10m.
		if strings.HasSuffix(def, "m0s") {
			def = strings.TrimSuffix(def, "0s")
			if strings.HasSuffix(def, "h0m") {
				def = strings.TrimSuffix(def, "0m")
			}
		}
		if def != "" && def != "0" && def != "0s" {
			return fmt.Sprintf("a number with its unit (ns, us, ms, s, m, h), e.g. %s %s", name, def)
		}
		return fmt.Sprintf("a number with its unit (ns, us, ms, s, m, h), e.g. %s 30s or %s 500ms", name, name)
	case strings.HasSuffix(t, "Slice"):
		if def == "" {
			def = "1,2,4"
		}
		return fmt.Sprintf("e.g. %s %s", name, def)
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		if def == "" || def == "0" {
			def = "4"
		}
		return fmt.Sprintf("digits only, e.g. %s %s", name, def)
	case strings.HasPrefix(t, "float"):
		if def == "" || def == "0" {
			def = "0.5"
		}
		return fmt.Sprintf("e.g. %s %s", name, def)
	case t == "bool":
		return fmt.Sprintf("write %s alone, or %s=false", name, name)
	}
	if def != "" {
		return fmt.Sprintf("e.g. %s %s", name, def)
	}
	return fmt.Sprintf("e.g. %s VALUE", name)
}

// unknownFlagHint suggests the nearest of c's flags to a misspelt one,
// and names the commands that do have a flag of that name.
func unknownFlagHint(c *cobra.Command, name string) string {
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if n := suggest.Nearest(name, names, 2); len(n) > 0 {
		return " (did you mean --" + strings.Join(n, " or --") + "?)"
	}
	var owners []string
	var walk func(*cobra.Command)
	walk = func(o *cobra.Command) {
		if o != c && o.IsAvailableCommand() && o.LocalFlags().Lookup(name) != nil {
			owners = append(owners, strings.TrimPrefix(o.CommandPath(), c.Root().Name()+" "))
		}
		for _, sub := range o.Commands() {
			walk(sub)
		}
	}
	walk(c.Root())
	if len(owners) > 0 {
		return fmt.Sprintf(": it is a flag of %s, not of %s", strings.Join(owners, ", "), strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "))
	}
	return ""
}
