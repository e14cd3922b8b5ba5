// Command llmreplay makes LLM serving speed claims reproducible: build a
// workload, replay it against a server, record every streamed token, and
// analyze the traces offline.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRootCmd(os.Stdout, os.Stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "llmreplay:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode maps an error to the process exit status: 2 for bad input (flags,
// files, values), the code an exitError carries, 1 otherwise.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
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
