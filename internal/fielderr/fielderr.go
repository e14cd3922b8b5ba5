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
)

// Error is a value of one configuration field that cannot be used.
type Error struct {
	Scope   string // the configuration type, e.g. "BuildConfig"
	Field   string // its field, e.g. "Schedule"
	Problem string // what is wrong, e.g. `"storm:3" has an unknown kind "storm"`
	Fix     string // what to do, e.g. "use burst, closed, rate or trace"
}

// New returns an *Error.
func New(scope, field, problem, fix string) error {
	return &Error{Scope: scope, Field: field, Problem: problem, Fix: fix}
}

func (e *Error) Error() string {
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
// names has a name for ("Schedule" → "--schedule"): "NAME PROBLEM: FIX".
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
	return errors.New(name + " " + fe.Problem + ": " + fe.Fix), true
}
