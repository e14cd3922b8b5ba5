package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
)

// TestEveryMetricCells: the report's every-metric tables read like the
// text tables: one per label, a column per level, each cell a number with
// the precision a table needs and its interval as "value [lo, hi]" — no
// raw digits, no separate _lo/_hi columns, no row without any value;
// counts are integers. By hand (analyze's twoLabels): A's TTFTs at
// concurrency 2 are 100 and 200 ms, so its p90 is 190, bounded below by
// the smaller sample and above by none (two samples are too few): "190
// [100, —]"; 2 requests succeeded.
func TestEveryMetricCells(t *testing.T) {
	res := twoLabels(t)
	tables := EveryMetric(res, analyze.KeyConcurrency)
	if len(tables) != 2 || tables[0].Title != "Every metric: A" || strings.Join(tables[0].Columns, "|") != "metric [unit]|concurrency 1|concurrency 2" {
		t.Fatalf("want one table per label with a column per concurrency, got %d: %q %q", len(tables), tables[0].Title, tables[0].Columns)
	}
	num := `-?\d+(\.\d+)?`
	cellRE := regexp.MustCompile(`^(—|` + num + `( \[(—|` + num + `), (—|` + num + `)\])?)$`)
	rows := map[string][]string{}
	for _, tab := range tables {
		for _, r := range tab.Rows {
			if tab.Title == "Every metric: A" {
				rows[r[0]] = r[1:]
			}
			blank := true
			for _, c := range r[1:] {
				if !cellRE.MatchString(c) {
					t.Errorf("%s, %s: cell %q is not \"value [lo, hi]\"", tab.Title, r[0], c)
				}
				if c != "—" {
					blank = false
				}
				if regexp.MustCompile(`\d\.\d{3,}`).MatchString(c) {
					t.Errorf("%s, %s: raw digits in %q", tab.Title, r[0], c)
				}
			}
			if blank {
				t.Errorf("%s: row %s has no value at any level", tab.Title, r[0])
			}
		}
		for _, c := range tab.Columns {
			if strings.HasSuffix(c, "_lo") || strings.HasSuffix(c, "_hi") {
				t.Errorf("%s: a separate interval column %s", tab.Title, c)
			}
		}
	}
	for name, want := range map[string]string{"ttft_p90 [ms]": "190 [100, —]", "requests_ok [requests]": "2", "output_tokens_max [tokens]": "4"} {
		if got := rows[name]; len(got) != 2 || got[1] != want {
			t.Errorf("A, %s at concurrency 2 = %q, want %q", name, got, want)
		}
	}
}
