package export

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestExportDocNamesTheColumns: docs/EXPORT.md's table names each file's
// columns as the code writes them, in order: every column of RequestRow,
// ChunkRow, RunRow and MetricRow, and no other (the names in backticks
// outside the parenthesised explanations).
func TestExportDocNamesTheColumns(t *testing.T) {
	b, err := os.ReadFile("../docs/EXPORT.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`([a-z0-9_]+)`")
	for file, row := range map[string]any{"requests": RequestRow{}, "chunks": ChunkRow{}, "runs": RunRow{}, "server_metrics": MetricRow{}} {
		var code []string
		ty := reflect.TypeOf(row)
		for i := 0; i < ty.NumField(); i++ {
			code = append(code, strings.Split(ty.Field(i).Tag.Get("parquet"), ",")[0])
		}
		var line string
		for l := range strings.SplitSeq(string(b), "\n") {
			if strings.HasPrefix(l, "| `"+file+"`") {
				line = l
			}
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Errorf("docs/EXPORT.md has no table row for %s", file)
			continue
		}
		var top strings.Builder // the cell without its (…) explanations
		depth := 0
		for _, r := range cells[3] {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth--
			case depth == 0:
				top.WriteRune(r)
			}
		}
		var doc []string
		for _, m := range name.FindAllStringSubmatch(top.String(), -1) {
			doc = append(doc, m[1])
		}
		if !slices.Equal(doc, code) {
			t.Errorf("docs/EXPORT.md's %s columns\n  %v\nthe code writes\n  %v", file, doc, code)
		}
	}
}
