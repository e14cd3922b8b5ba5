package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/outfile"
)

// writeOutput writes a command's output file whole or not at all
// (atomicfile): it refuses a file that is one of the command's inputs, and
// an existing file unless --force; write fills it.
func writeOutput(out string, force bool, inputs []string, write func(io.Writer) error) error {
	if err := outfile.Check(out, force, inputs...); err != nil {
		return usageError(err)
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

// checkOutFolder refuses an output file whose folder is missing (it is
// not created behind the user's back) or is a file, before the command
// does any work.
func checkOutFolder(out string) error {
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if p := outfile.FileInTheWay(dir); p != "" {
		return usagef("cannot write %s: %s is a file, not a folder; choose another output path", out, p)
	}
	return usagef("cannot write %s: folder %s does not exist (create it first)", out, dir)
}

// checkFolder refuses a folder flag's path that is a file or lies under
// one, as bad input and before the command starts anything: the folder's
// mkdir would otherwise fail late (bench after starting its simulator)
// with a bare "not a directory" and exit 1. A missing folder is fine: the
// command creates it.
func checkFolder(flag, dir string) error {
	if dir == "" {
		return nil
	}
	switch p := outfile.FileInTheWay(dir); {
	case p == "":
		return nil
	case p == filepath.Clean(dir):
		return usagef("%s %s: it is a file, not a folder; give a folder's path (created if missing), or move the file away", flag, dir)
	default:
		return usagef("%s %s: %s is a file, not a folder, so nothing can go under it; give a folder's path (created if missing)", flag, dir, p)
	}
}

// folderError is what a command says when creating its flag's folder
// failed with err: checkFolder's bad input when a file is in the way, else
// err as it is.
func folderError(flag, dir string, err error) error {
	if e := checkFolder(flag, dir); e != nil {
		return e
	}
	return err
}
