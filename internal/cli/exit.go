// Package cli is the ground of the command line: exit statuses, flag and
// argument errors in the words of the flag a person typed (with the
// nearest names for a misspelt one), a repeated single-value flag
// refused, library field errors renamed to the flags that set them, and
// long help read from prose files. It knows cobra and pflag, and imports
// no product package: the commands themselves live in cmd/llmreplay.
package cli

import (
	"errors"
	"fmt"
	"strings"
)

// ExitError carries an exit status with an error. Only the binary decides
// exit statuses; library code returns plain errors.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit is err with exit status code.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Usage marks err as bad input: exit status 2. An error that carries a
// status already keeps it; nil stays nil.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	var e *ExitError
	if errors.As(err, &e) {
		return err
	}
	return &ExitError{Code: 2, Err: err}
}

// Usagef is Usage(fmt.Errorf(...)).
func Usagef(format string, a ...any) error { return Usage(fmt.Errorf(format, a...)) }

// Code maps an error to the process exit status: the status an ExitError
// carries, 2 for cobra's own command-line errors, 1 otherwise.
func Code(err error) int {
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	if isCobraUsage(err) {
		return 2
	}
	return 1
}

// isCobraUsage recognises the errors cobra itself returns for a wrong
// command line (unknown command, wrong number of arguments): bad input like
// any other. Cobra has no error types for these, only messages.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "invalid argument", "unknown flag", "unknown shorthand flag"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
