package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/suggest"
)

// CommandNames are the names of c's commands people can run.
func CommandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// UnknownCommand is the RunE of a root that takes no arguments of its
// own: bare it prints help; a word that is no command is one line with
// the nearest commands, where cobra's own message spans four.
func UnknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return c.Help()
	}
	return Usagef("unknown command %q%s (see '%s --help')", args[0], suggest.Phrase(args[0], CommandNames(c)), c.CommandPath())
}

// NeedsSubcommand is the RunE of a command that only groups subcommands:
// run bare or with an unknown word it is bad input, exit 2, with one line
// naming the subcommands, the same for every group.
func NeedsSubcommand(cmd *cobra.Command, args []string) error {
	subs := CommandNames(cmd)
	list := strings.Join(subs, ", ")
	if len(args) > 0 {
		return Usagef("unknown %s subcommand %q%s: use one of %s (see '%s --help')", cmd.Name(), args[0], suggest.Phrase(args[0], subs), list, cmd.CommandPath())
	}
	return Usagef("%s needs a subcommand: one of %s (see '%s --help')", cmd.Name(), list, cmd.CommandPath())
}

// OneFile is the Args check of a command that takes exactly one file: it
// says what the command needs instead of cobra's "accepts 1 arg(s)".
func OneFile(name, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return Usagef("%s needs %s", name, what)
		case len(args) > 1:
			return Usagef("%s takes one file, got %d: %s (quote a value that contains spaces)", name, len(args), strings.Join(args, " "))
		}
		return nil
	}
}
