package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/llmreplay/llmreplay/internal/atomicfile"
)

// writeOutput writes a command's output file whole or not at all
// (atomicfile): it refuses a file that is one of the command's inputs, and
// an existing file unless --force; write fills it.
func writeOutput(out string, force bool, inputs []string, write func(io.Writer) error) error {
	outAbs, _ := filepath.Abs(out)
	for _, in := range inputs {
		if abs, _ := filepath.Abs(in); abs == outAbs {
			return usagef("-o %s is one of the inputs: write elsewhere", out)
		}
	}
	if _, err := os.Stat(out); err == nil && !force {
		return usagef("%s exists: pass --force to replace it, or write elsewhere", out)
	}
	f, err := atomicfile.Create(out)
	if err != nil {
		return usageError(err)
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}
