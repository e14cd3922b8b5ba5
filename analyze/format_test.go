package analyze

import (
	"math"
	"testing"
)

// Counts print as integers in tables and CSV; other metrics keep their
// precision.
func TestFormatCounts(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		metric string
		v      Value
		raw    bool
		want   string
	}{
		{"requests_ok", point(5, 1), false, "5"},
		{"requests_failed", point(0, 3), false, "0"},
		{"requests_ok", point(1492, 3), true, "1492"},
		{"output_tokens_p50", Value{16, nan, nan, 2}, false, "16"},
		{"output_tokens", Value{32.5, nan, nan, 2}, false, "32.5"},
		{"output_tokens", Value{4.5, nan, nan, 2}, true, "4.5"},
		{"output_tokens", Value{200, 190, 210, 8}, false, "200 ±5%"},
		{"output_tokens", point(nan, 0), false, "—"},
		{"output_tokens", point(nan, 0), true, ""},
		{"ttft_p50", Value{5, nan, nan, 1}, false, "5.00"},
		{"per_stream_tps", Value{499.4, nan, nan, 1}, true, "499.4"},
	}
	for _, c := range cases {
		if got := FormatMetric(c.metric, c.v, c.raw); got != c.want {
			t.Errorf("FormatMetric(%s, %v, raw=%v) = %q, want %q", c.metric, c.v.Value, c.raw, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 32000: "32,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := GroupDigits(n); got != want {
			t.Errorf("GroupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestPlusMinusIsHalfWidth: ± is the half-width of the interval (what the
// tables' notes say), not its larger one-sided gap: 100 in [90, 130] is
// ±20%, not ±30%; a tight interval is shown, with a decimal under 1%, and
// said to be under 0.1% rather than dropped.
func TestPlusMinusIsHalfWidth(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Value{100, 90, 130, 8}, "100 ±20%"},
		{Value{1000, 997, 1003, 8}, "1000 ±0.3%"},
		{Value{1000, 999.9, 1000.1, 8}, "1000 ±<0.1%"},
		{Value{1000, 1000, 1000, 8}, "1000 ±<0.1%"},
		{Value{100, 90, math.Inf(1), 8}, "100"},
		{Value{100, 90, 110, 1}, "100"},
	} {
		if got := FormatTPS(c.v, false); got != c.want {
			t.Errorf("FormatTPS(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
