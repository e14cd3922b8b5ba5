// Package fielderr is the error a library returns for a setting it cannot
// use. It names the setting by its field in the library's own
// configuration (BuildConfig.Schedule, Config.URL), so the message reads
// right for a Go caller, and lets the CLI, which knows which flag set that
// field, say the same thing in its own words ("--schedule …") with one
// table per command instead of a second copy of every check.
package fielderr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Error is a value of one configuration field that cannot be used.
type Error struct {
	Scope   string // the configuration type, e.g. "BuildConfig"
	Field   string // its field, e.g. "Schedule"
	Problem string // what is wrong, e.g. `"storm:3" has an unknown kind "storm"`
	Fix     string // what to do, e.g. "use burst, closed, rate or trace"

	// format and args are a Newf error's whole message, its settings
	// written {Name}; Problem then holds it in the fields' names.
	format string
	args   []any
}

// New returns an *Error.
func New(scope, field, problem, fix string) error {
	return &Error{Scope: scope, Field: field, Problem: problem, Fix: fix}
}

// Newf returns an *Error whose whole message is format formatted with
// args (fmt.Sprintf), where {Name} stands for the setting Name of the same
// configuration wherever the sentence needs it: "no {SLO}: give one, e.g.
// {SLO} 'ttft_p90<=1s'", "{MaxRequests} and {MaxDuration}: give 0 or
// more". Error writes each as its field's name, Rename as the caller's
// word for it. The names go into format before the values are formatted
// in, so a value that holds braces is never taken for a name.
func Newf(scope, field, format string, args ...any) error {
	e := &Error{Scope: scope, Field: field, format: format, args: args}
	e.Problem = e.render(nil)
	return e
}

// ref is a setting's place in a Newf format.
var ref = regexp.MustCompile(`\{[A-Z][A-Za-z0-9]*\}`)

// render is a Newf message with names' words for the settings it names;
// a setting names has no word for keeps its field's name.
func (e *Error) render(names map[string]string) string {
	f := ref.ReplaceAllStringFunc(e.format, func(m string) string {
		field := m[1 : len(m)-1]
		if n, ok := names[field]; ok {
			field = n
		}
		return strings.ReplaceAll(field, "%", "%%")
	})
	return fmt.Sprintf(f, e.args...)
}

func (e *Error) Error() string {
	if e.format != "" {
		return e.Scope + ": " + e.Problem
	}
	return fmt.Sprintf("%s.%s %s: %s", e.Scope, e.Field, e.Problem, e.Fix)
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

// Rename rewrites err in a caller's words when it is an *Error whose field
// names has a name for ("Schedule" → "--schedule"): "NAME PROBLEM: FIX",
// or a Newf error's message with every setting it names in names' words.
// It returns err unchanged otherwise, and ok reports whether it renamed.
func Rename(err error, names map[string]string) (out error, ok bool) {
	fe := As(err)
	if fe == nil {
		return err, false
	}
	name, found := names[fe.Field]
	if !found {
		return err, false
	}
	if fe.format != "" {
		return errors.New(fe.render(names)), true
	}
	return errors.New(name + " " + fe.Problem + ": " + fe.Fix), true
}

// Given says whether the caller stated a field's value (a command line
// knows which flags were typed). A library whose zero value means "the
// default" asks it to refuse a stated zero, a value the user typed and
// the default would silently replace; and to refuse a stated setting that
// does not apply. A nil Given states nothing.
type Given func(field string) bool

// Has reports whether field was stated.
func (g Given) Has(field string) bool { return g != nil && g(field) }
