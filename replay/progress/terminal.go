package progress

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (not a pipe, file or buffer)
// with a known width, for Options.Terminal: a pseudo-terminal without a
// size (some CI runners) would make the bar draw nothing, so it gets the
// plain lines.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	return err == nil && width > 0
}
