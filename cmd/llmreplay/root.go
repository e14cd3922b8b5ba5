package main

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/suggest"
	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/workload/tokenize"
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
		Use:           "llmreplay",
		Short:         "Reproducible LLM serving speed measurements",
		Long:          helpText("llmreplay"),
		Example:       helpText("llmreplay.example"),
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the same first line as the version command.
		Version: version.Tool,
	}
	root.SetVersionTemplate("llmreplay {{.Version}} (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors are bad input: exit 2, in the flag's words.
	root.SetFlagErrorFunc(commandLineError)
	// A word that is no command: one line with the nearest commands, where
	// cobra's own message spans four.
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return usagef("unknown command %q%s (see '%s --help')", args[0], suggest.Phrase(args[0], commandNames(c)), c.CommandPath())
	}
	root.PersistentPreRunE = resolveTokenizerFlag
	for _, sub := range subcommands {
		root.AddCommand(sub())
	}
	// --input_tokens, as claims and tables spell the word, is --input-tokens.
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	singleValueFlags(root)
	registerCompletions(root)
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
	newExportCmd,
	newSimCmd,
	newReplayCmd,
	newBenchCmd,
	newProbeCmd,
	newCapacityCmd,
	newSelftestCmd,
	newKubeCmd,
}

// commandNames are the names of c's commands people can run.
func commandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// needsSubcommand is the RunE of a command that only groups subcommands
// (workload, trace, kube): run bare or with an unknown word it is bad input,
// exit 2, with one line naming the subcommands, the same for every group.
func needsSubcommand(cmd *cobra.Command, args []string) error {
	subs := commandNames(cmd)
	list := strings.Join(subs, ", ")
	if len(args) > 0 {
		return usagef("unknown %s subcommand %q%s: use one of %s (see '%s --help')", cmd.Name(), args[0], suggest.Phrase(args[0], subs), list, cmd.CommandPath())
	}
	return usagef("%s needs a subcommand: one of %s (see '%s --help')", cmd.Name(), list, cmd.CommandPath())
}

// oneFile is the Args check of a command that takes exactly one file: it
// says what the command needs instead of cobra's "accepts 1 arg(s)".
func oneFile(name, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("%s needs %s", name, what)
		case len(args) > 1:
			return usagef("%s takes one file, got %d: %s (quote a value that contains spaces)", name, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// singleValueFlags makes a repeated single-value flag an error: pflag keeps
// the last of `--max-tokens 100 --max-tokens 200` silently, which hides a
// typo in a long command line. List flags (slices, arrays) keep accumulating.
func singleValueFlags(c *cobra.Command) {
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
			f.Value = &onceValue{Value: f.Value, name: f.Name}
		})
	}
	for _, sub := range c.Commands() {
		singleValueFlags(sub)
	}
}

// onceValue refuses a second Set; the flag error handler turns the error
// into exit status 2 with the flag's name.
type onceValue struct {
	pflag.Value
	name string
	set  bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return errors.New("given twice: it takes one value, give it once")
	}
	v.set = true
	return v.Value.Set(s)
}

//go:embed help/*.txt
var helpFiles embed.FS

// helpText is a command's long description or its examples (NAME.example),
// kept as prose in help/NAME.txt rather than as Go string literals: the
// words people read are edited there, and TestCLIReference holds the
// pages built from them. A missing file is a mistake in this package.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
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
	v := f.Value
	if once, ok := v.(*onceValue); ok {
		v = once.Value // set once by the user; this only says what it means
	}
	if err := v.Set(r.Path); err != nil {
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "tokenizer: %s is %s (%s)\n", r.Spec, r.Path, r.From)
	return nil
}
