// Package outfile decides whether a command may write its output where the
// user asked. It is the one place the rules live, so that every command that
// takes -o (workload build, replay, bench, trace merge, selftest, kube)
// refuses the same things in the same words:
//
//   - an output that is one of the command's inputs, even with --force
//     (`replay x.workload.zst -o x.workload.zst` would replace the workload
//     with a trace; a hard link or a symlink to an input counts too);
//   - an existing file, unless --force: nothing the user made is replaced
//     silently;
//   - with --force, a symlink is replaced, never followed: writing through
//     it could destroy whatever file it points at.
//
// Devices and pipes (-o /dev/null, /dev/stdout, a FIFO) are always allowed:
// writing to them destroys nothing, and the writers skip fsync and rename
// for them (see Regular).
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Check returns nil when dest may be written. force allows replacing an
// existing regular file or symlink; inputs are the paths the same command
// reads. The errors are one line that names the problem and the fix; the
// command line reports them as bad input.
func Check(dest string, force bool, inputs ...string) error {
	if dest == "" || dest == "-" {
		return nil
	}
	lst, err := os.Lstat(dest)
	if errors.Is(err, syscall.ENOTDIR) {
		// A file where a folder of the path should be: say which, not
		// the bare "lstat …: not a directory".
		return fmt.Errorf("cannot write %s: %s is a file, not a folder; choose another output path", dest, FileInTheWay(filepath.Dir(dest)))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", dest, err)
	}
	// The target as reading it would see it: through a symlink.
	st, serr := os.Stat(dest)
	if serr == nil {
		for _, in := range inputs {
			if in == "" || in == "-" {
				continue
			}
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return fmt.Errorf("cannot write %s: it is also an input of this command (%s); choose another output name", dest, in)
			}
		}
	}
	if lst.Mode()&fs.ModeSymlink == 0 && !lst.Mode().IsRegular() && !lst.IsDir() {
		return nil // a device, pipe or socket
	}
	if lst.Mode()&fs.ModeSymlink != 0 && serr == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil // /dev/stdout and the like: a symlink to a device
	}
	if lst.IsDir() || (serr == nil && st.IsDir()) {
		return fmt.Errorf("cannot write %s: it is a folder; give a file name inside it", dest)
	}
	if !force {
		what := "exists"
		if lst.Mode()&fs.ModeSymlink != 0 {
			what = "exists (a symlink)"
		}
		return fmt.Errorf("cannot write %s: it %s; pass --force to replace it, or choose another output name", dest, what)
	}
	return nil
}

// Regular reports whether path is, or will be, a regular file: false for an
// existing device, pipe or socket (followed through symlinks), which the
// writers open in place without fsync (fsync on /dev/null fails) or rename.
func Regular(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return true
	}
	return st.Mode().IsRegular() || st.IsDir()
}

// Replace removes a symlink at path so that a file created there next is a
// new file, not the symlink's target. Check has already made sure the
// user asked for it (--force) and that the link does not lead to a device.
func Replace(path string) error {
	lst, err := os.Lstat(path)
	if err != nil || lst.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if !Regular(path) {
		return nil
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("cannot replace the symlink %s: %v", path, err)
	}
	return nil
}

// Claim creates path empty, failing (fs.ErrExist) if anything is there:
// a run's hold on an output name from before it sends anything until it
// writes the file, so that neither an existing file nor another run
// started at the same moment is replaced. A writer that truncates or
// renames over the claim fills it; a claim left empty is the caller's to
// remove.
func Claim(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// Hold claims path (Claim) for a run that fills it only at its end, and
// returns the release to call when the run is over. A file already there
// (one --force lets the run replace) is left as it is until the run
// replaces it, and its release does nothing.
func Hold(path string) (release func(), err error) {
	if _, err := os.Lstat(path); err == nil {
		return func() {}, nil
	}
	if err := Claim(path); err != nil {
		return nil, err
	}
	return Claimed(path), nil
}

// Claimed is the release of a claim just made on path (Claim,
// ClaimNumbered): it removes the claim when it is still the empty file
// claimed, so a run that failed or was stopped leaves nothing, and never
// a file written in place or renamed over it (another inode).
func Claimed(path string) (release func()) {
	claim, _ := os.Stat(path)
	return func() {
		if fi, err := os.Stat(path); err == nil && claim != nil && os.SameFile(fi, claim) && fi.Size() == 0 {
			os.Remove(path)
		}
	}
}

// ClaimNumbered claims stem+ext for every ext, or, when any of those names
// is taken (a run started in the same second: default names are
// timestamped to the second), the first free set of stem-2+ext,
// stem-3+ext, … up to stem-1000. It returns the stem it claimed. Files
// already there are never touched, and on failure nothing claimed is left.
// When every name is taken the error wraps fs.ErrExist.
func ClaimNumbered(stem string, exts ...string) (string, error) {
	for i := 1; i <= 1000; i++ {
		s := stem
		if i > 1 {
			s = fmt.Sprintf("%s-%d", stem, i)
		}
		var claimed []string
		var err error
		for _, ext := range exts {
			if err = Claim(s + ext); err != nil {
				break
			}
			claimed = append(claimed, s+ext)
		}
		if err == nil {
			return s, nil
		}
		for _, p := range claimed {
			os.Remove(p)
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("cannot write %s%s: %v", s, exts[len(claimed)], err)
		}
	}
	return "", allTaken(fmt.Sprintf("%s%s and 999 numbered names after it exist", stem, exts[0]))
}

// allTaken is ClaimNumbered's error when every name is taken: it reads as
// itself and matches fs.ErrExist.
type allTaken string

func (e allTaken) Error() string { return string(e) }
func (e allTaken) Unwrap() error { return fs.ErrExist }

// FileInTheWay returns the part of dir's path that exists as something
// other than a folder (dir itself, or a parent), "" when there is none.
// Errors on the way are skipped: a folder that cannot be made for another
// reason (permissions) is the mkdir's to report.
func FileInTheWay(dir string) string {
	for p := filepath.Clean(dir); ; {
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				return ""
			}
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}

// CheckParent refuses an output file whose folder is missing (it is not
// created behind the user's back) or is a file, before a command does any
// work.
func CheckParent(out string) error {
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if p := FileInTheWay(dir); p != "" {
		return fmt.Errorf("cannot write %s: %s is a file, not a folder; choose another output path", out, p)
	}
	return fmt.Errorf("cannot write %s: folder %s does not exist (create it first)", out, dir)
}

// CheckFolder refuses a folder setting's path (named by setting, the flag
// that gave it) that is a file or lies under one, before a command starts
// anything: its mkdir would otherwise fail late (bench after starting its
// simulator) with a bare "not a directory". A missing folder, or none, is
// fine: the command creates it.
func CheckFolder(setting, dir string) error {
	if p := FolderProblem(dir); p != "" {
		return fmt.Errorf("%s %s: %s", setting, dir, p)
	}
	return nil
}

// FolderProblem is what is wrong with dir as a folder to create or write
// in: "" when nothing is (it is a folder, missing, or not given), else
// which part of its path is a file, and the fix.
func FolderProblem(dir string) string {
	if dir == "" {
		return ""
	}
	switch p := FileInTheWay(dir); {
	case p == "":
		return ""
	case p == filepath.Clean(dir):
		return "it is a file, not a folder; give a folder's path (created if missing), or move the file away"
	default:
		return p + " is a file, not a folder, so nothing can go under it; give a folder's path (created if missing)"
	}
}
