package render

import (
	"os"
	"strings"
	"testing"
)

// TestMetricsDocNamesSweepColumns: docs/METRICS.md lists the sweep CSV's
// columns as SweepColumns writes them, in order.
func TestMetricsDocNamesSweepColumns(t *testing.T) {
	b, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	const lead = "with the columns `"
	s := string(b)
	i := strings.Index(s, lead)
	if i < 0 {
		t.Fatalf("docs/METRICS.md no longer says %q", lead)
	}
	s = s[i+len(lead):]
	doc := strings.Join(strings.Fields(s[:strings.Index(s, "`")]), " ")
	if want := strings.Join(SweepColumns, ", "); doc != want {
		t.Errorf("docs/METRICS.md's sweep columns\n  %s\nthe code writes\n  %s", doc, want)
	}
}
