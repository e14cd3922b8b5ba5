//go:build unix

package testutil

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Child is the test binary run again for one of its tests, the way a test
// kills a writer in the middle of its work (SIGKILL cannot be caught or
// cleaned up after) and then reads what the writer left on disk. The
// child's test sees env and does the work instead of testing; it reports
// progress as lines on its standard output, and "ERROR ..." when it fails.
type Child struct {
	t   testing.TB
	cmd *exec.Cmd
	out io.Reader
}

// StartChild starts the test binary running only the test named test,
// with env (NAME=value) added to the environment and its standard error
// the test's. The child is killed when the test ends, if it still runs.
func StartChild(t testing.TB, test string, env ...string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return &Child{t: t, cmd: cmd, out: out}
}

// Reports yields the rest of each line of the child's output that starts
// with prefix, until the output ends; a line starting with "ERROR" fails
// the test.
func (c *Child) Reports(prefix string) iter.Seq[string] {
	return func(yield func(string) bool) {
		lines := bufio.NewScanner(c.out)
		for lines.Scan() {
			line := lines.Text()
			if strings.HasPrefix(line, "ERROR") {
				c.t.Fatal("child:", line)
			}
			if v, ok := strings.CutPrefix(line, prefix); ok && !yield(v) {
				return
			}
		}
	}
}

// Kill sends the child SIGKILL.
func (c *Child) Kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
}

// WaitKilled waits for the child to end and says how, unless SIGKILL
// ended it.
func (c *Child) WaitKilled() error {
	err := c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return nil
	}
	return fmt.Errorf("the child did not die of SIGKILL: %v", err)
}
