package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/safetext"
)

// Renderers print a Table; they know nothing of metrics.

// RenderText prints t as aligned columns with footnotes below.
func RenderText(w io.Writer, t *Table) error {
	t = Escaped(t, safetext.Show)
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); i < len(widths) && n > widths[i] {
				widths[i] = n
			}
		}
	}
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := widths[i] - utf8.RuneCountInString(c)
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", pad))
			} else {
				b.WriteString(strings.Repeat(" ", pad) + c)
			}
		}
		b.WriteString("\n")
	}
	line(t.Columns)
	for _, r := range t.Rows {
		line(r)
	}
	writeNotes(&b, t.Notes)
	_, err := io.WriteString(w, strings.TrimRight(b.String(), " ")+"")
	return err
}

func writeNotes(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\n")
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
}

// RenderMarkdown prints t as a GitHub table with footnotes below.
func RenderMarkdown(w io.Writer, t *Table) error {
	t = Escaped(t, safetext.Markdown)
	var b strings.Builder
	if t.Title != "" {
		b.WriteString("**" + t.Title + "**\n\n")
	}
	esc := func(s string) string { return s }
	b.WriteString("|")
	for _, c := range t.Columns {
		b.WriteString(" " + esc(c) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Columns {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	writeNotes(&b, t.Notes)
	_, err := io.WriteString(w, b.String())
	return err
}

// Escaped is a copy of t with every string a person will read escaped: labels default
// to the server's model id, and notes quote server messages. Raw values stay
// in the trace, and in JSON (exact, see safetext.JSONWriter).
func Escaped(t *Table, esc func(string) string) *Table {
	c := *t
	c.Title = esc(t.Title)
	c.Columns = make([]string, len(t.Columns))
	for i, s := range t.Columns {
		c.Columns[i] = esc(s)
	}
	c.Rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		c.Rows[i] = make([]string, len(r))
		for j, s := range r {
			c.Rows[i][j] = esc(s)
		}
	}
	c.Notes = make([]string, len(t.Notes))
	for i, s := range t.Notes {
		c.Notes[i] = esc(s)
	}
	return &c
}

// RenderCSV prints the columns and rows only; the caller sends the notes
// (warnings) to stderr so the CSV stays machine-readable. Cells are
// escaped with safetext.CSV: a CSV is opened by people, in a spreadsheet
// or a terminal, and a label (by default the server's model id) must not
// reorder what they read or run as a spreadsheet formula. A program that
// wants the exact strings reads --format json.
func RenderCSV(w io.Writer, t *Table) error {
	t = Escaped(t, safetext.CSV)
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// RenderWarnings prints one line per warning, for stderr in CSV and JSON
// modes.
func RenderWarnings(w io.Writer, ws []analyze.Warning) error {
	for _, x := range ws {
		if _, err := fmt.Fprintf(w, "warning: %s\n", safetext.Show(fmt.Sprintf("%s %s: %s (%s)", x.Code, sortedKV(x.Keys), x.Message, EvidenceText(x.Evidence)))); err != nil {
			return err
		}
	}
	return nil
}
