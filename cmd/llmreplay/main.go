// Command llmreplay makes LLM serving speed claims reproducible: build a
// workload, replay it against a server, record every streamed token, and
// analyze the traces offline.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmreplay/llmreplay/internal/cli"
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
// files, values), the code a cli.ExitError carries, 1 otherwise.
var exitCode = cli.Code
