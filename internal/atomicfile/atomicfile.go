// Package atomicfile writes a file so that readers see either nothing or the
// whole file: bad input or a crash never leaves a half-written output.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// File is a temporary file in the destination's folder that becomes the
// destination on Commit, or disappears on Abort.
type File struct {
	*os.File
	dest   string
	done   bool
	direct bool // dest is a device or pipe (-o /dev/null): written in place
}

// Create starts writing dest. The folder must exist: a missing folder is
// reported as bad input rather than created behind the user's back.
func Create(dest string) (*File, error) {
	dir := filepath.Dir(dest)
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: folder %s does not exist (create it first)", dest, dir)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("cannot write %s: %s is not a folder", dest, dir)
	}
	// A device or pipe (/dev/null, /dev/stdout, a FIFO) is written in
	// place: there is nothing to replace atomically, renaming a temporary
	// file over /dev/null would be wrong, and fsync on it fails.
	if st, err := os.Stat(dest); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(dest, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", dest, err)
		}
		return &File{File: f, dest: dest, direct: true}, nil
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", dest, err)
	}
	return &File{File: f, dest: dest}, nil
}

// Commit syncs, closes and renames the file into place.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s already committed or aborted", f.dest)
	}
	f.done = true
	if f.direct {
		if err := f.File.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.dest, err)
		}
		return nil
	}
	// CreateTemp makes the file 0600; an output is for the user's tools
	// and colleagues like any file they write, so give it the usual 0644.
	if err := f.File.Chmod(0o644); err != nil {
		f.File.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	if err := os.Rename(f.Name(), f.dest); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.dest, err)
	}
	return nil
}

// Abort removes the temporary file. It is safe to call after Commit, so
// `defer f.Abort()` cleans up on every error path.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if !f.direct {
		os.Remove(f.Name())
	}
}

// WriteFile writes data to dest atomically.
func WriteFile(dest string, data []byte) error {
	f, err := Create(dest)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return f.Commit()
}
