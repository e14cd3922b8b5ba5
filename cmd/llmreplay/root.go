package main

import (
	"embed"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// helpFiles hold each command's long description and examples as prose
// (help/NAME.txt, help/NAME.example.txt) rather than as Go string
// literals: the words people read are edited there, and TestCLIReference
// holds the pages built from them.
//
//go:embed help/*.txt
var helpFiles embed.FS

// NewRootCmd builds the whole command tree writing to stdout and stderr, so
// tests can run the CLI in-process.
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "llmreplay",
		Short:         "Reproducible LLM serving speed measurements",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the same first line as the version command.
		Version: version.Tool,
		// A word that is no command: one line with the nearest commands.
		Args: cobra.ArbitraryArgs,
		RunE: cli.UnknownCommand,
		// A --tokenizer model id is the file the hub cache holds for it.
		PersistentPreRunE: resolveTokenizerFlag,
	}
	root.SetVersionTemplate("llmreplay {{.Version}} (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors are bad input: exit 2, in the flag's words.
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(newVersionCmd(), newWorkloadCmd(), newTraceCmd(), newAnalyzeCmd(), newCheckCmd(), newReportCmd(), newExportCmd(),
		newSimCmd(), newReplayCmd(), newBenchCmd(), newProbeCmd(), newCapacityCmd(), newSelftestCmd(), newKubeCmd())
	// --input_tokens, as claims and tables spell the word, is --input-tokens.
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	cli.SingleValueFlags(root)
	registerCompletions(root)
	if err := cli.FillHelp(root, helpFiles, "help"); err != nil {
		panic(err) // a help file misnamed: a mistake in this package
	}
	return root
}

// group is a command that only groups subcommands (workload, trace,
// probe): run bare or with an unknown word it names them, exit 2.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs, RunE: cli.NeedsSubcommand}
	cmd.AddCommand(subs...)
	return cmd
}

// resolveTokenizerFlag runs before every command: a --tokenizer given as a
// Hugging Face model id (Qwen/Qwen3-8B) becomes the tokenizer.json the
// local hub cache holds for it, said on stderr, so every command that takes
// --tokenizer takes the names people use, and records the file it used.
func resolveTokenizerFlag(c *cobra.Command, _ []string) error {
	f := c.Flags().Lookup("tokenizer")
	if f == nil || !f.Changed {
		return nil
	}
	r, err := tokenize.Resolve(f.Value.String())
	if err != nil {
		return flagError(err)
	}
	if r.Path == r.Spec {
		return nil
	}
	// Set once by the user; this only says what it means.
	if err := cli.Underlying(f.Value).Set(r.Path); err != nil {
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "tokenizer: %s is %s (%s)\n", r.Spec, r.Path, r.From)
	return nil
}
