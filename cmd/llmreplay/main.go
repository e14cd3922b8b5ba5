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
	return 1
}
