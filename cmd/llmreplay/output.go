package main

import (
	"io"

	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/outfile"
)

// writeOutput writes a command's output file whole or not at all
// (atomicfile): it refuses a file that is one of the command's inputs, and
// an existing file unless --force; write fills it.
func writeOutput(out string, force bool, inputs []string, write func(io.Writer) error) error {
	if err := outfile.Check(out, force, inputs...); err != nil {
		return cli.Usage(err)
	}
	f, err := atomicfile.Create(out)
	if err != nil {
		return cli.Usage(err)
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}
