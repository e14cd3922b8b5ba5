package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/version"
)

// exitError carries an exit status with an error. Only package main decides
// exit statuses; library code returns plain errors.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as bad input: exit status 2.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	var e *exitError
	if errors.As(err, &e) {
		return err
	}
	return &exitError{code: 2, err: err}
}

// usagef is usageError(fmt.Errorf(...)).
func usagef(format string, a ...any) error { return usageError(fmt.Errorf(format, a...)) }

// NewRootCmd builds the whole command tree writing to stdout and stderr, so
// tests can run the CLI in-process.
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "llmreplay",
		Short: "Reproducible LLM serving speed measurements",
		Long: `llmreplay makes LLM serving speed claims reproducible.

  workload build → NAME.workload.zst → replay → NAME.trace.zst → analyze / check

Build a tokenizer-exact workload once, replay it against any endpoint on a
precise schedule, record every streamed chunk's arrival time, and turn the
traces into tables offline.`,
		Example: `  # the seeds' benchmark against the built-in simulated server
  llmreplay bench

  # the same against a real server
  llmreplay bench --url http://127.0.0.1:8080 --label "llama.cpp Q4_K_M"`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the same first line as the version command.
		Version: version.Tool,
	}
	root.SetVersionTemplate("llmreplay {{.Version}} (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors are bad input: exit 2 with the flag's own message.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%v (see '%s --help')", err, c.CommandPath())
	})
	for _, sub := range subcommands {
		root.AddCommand(sub())
	}
	return root
}

// subcommands lists the command constructors; each lives in its own file.
var subcommands = []func() *cobra.Command{
	newVersionCmd,
	newWorkloadCmd,
	newTraceCmd,
	newAnalyzeCmd,
	newCheckCmd,
	newReportCmd,
	newSimCmd,
	newReplayCmd,
	newBenchCmd,
	newSelftestCmd,
	newKubeCmd,
}
