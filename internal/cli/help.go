package cli

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// FillHelp gives every command of root's tree the long description and
// the examples kept as prose in dir of files, rather than as Go string
// literals: NAME.txt is the Long and NAME.example.txt the Example of the
// command whose path, below root, is NAME with "-" for spaces (the root's
// own NAME is its name: llmreplay.txt, trace-merge.example.txt). A
// command without a file keeps what it has. A file that names no command
// is an error: a misspelt name would otherwise vanish from the help.
func FillHelp(root *cobra.Command, files fs.FS, dir string) error {
	unused := map[string]bool{}
	names, err := fs.Glob(files, path.Join(dir, "*.txt"))
	if err != nil {
		return err
	}
	for _, n := range names {
		unused[n] = true
	}
	read := func(name string, into *string) error {
		p := path.Join(dir, name+".txt")
		if !unused[p] {
			return nil
		}
		delete(unused, p)
		b, err := fs.ReadFile(files, p)
		*into = strings.TrimSuffix(string(b), "\n")
		return err
	}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		name := root.Name()
		if c != root {
			name = strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), root.Name()+" "), " ", "-")
		}
		if err := read(name, &c.Long); err != nil {
			return err
		}
		if err := read(name+".example", &c.Example); err != nil {
			return err
		}
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return err
	}
	if len(unused) > 0 {
		return fmt.Errorf("%s names no command", slices.Sorted(maps.Keys(unused))[0])
	}
	return nil
}
