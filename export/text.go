package export

import (
	"fmt"
	"io"
)

// WriteText says what Export wrote: the rows of each table, then each
// file, one a line.
func (c *Counts) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%d requests, %d chunks, %d runs", c.Requests, c.Chunks, c.Runs)
	if c.Metrics > 0 {
		fmt.Fprintf(w, ", %d server metric rows", c.Metrics)
	}
	fmt.Fprintln(w)
	for _, f := range c.Files {
		fmt.Fprintln(w, f)
	}
}
