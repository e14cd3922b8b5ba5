package analyze

import (
	"fmt"
	"math"
	"strings"
)

// Number formatting shared by the renderers and the claim checker: one
// place decides how a tok/s or ms value reads.

// FormatTPS prints a median with its interval's half-width as ±% of the
// median, the way benchstat does, when the interval is bounded.
func FormatTPS(v Value, raw bool) string {
	if !v.Valid() {
		return "—"
	}
	s := FormatNum(v.Value, raw)
	if !raw {
		s += plusMinus(v)
	}
	return s
}

// plusMinus is " ±P%", P the half-width of v's bounded interval as a
// percentage of the value (what the tables' notes say ± is), "" without
// one. It is never dropped for being small: under 1% it shows a decimal,
// under 0.1% it says so, so a tight interval reads as tight, not absent.
func plusMinus(v Value) string {
	if v.N <= 1 || !v.HasInterval() || math.IsInf(v.Lo, 0) || math.IsInf(v.Hi, 0) || v.Value == 0 {
		return ""
	}
	pct := (v.Hi - v.Lo) / 2 / math.Abs(v.Value) * 100
	switch {
	case pct < 0.05:
		return " ±<0.1%"
	case pct < 0.95:
		return fmt.Sprintf(" ±%.1f%%", pct)
	}
	return fmt.Sprintf(" ±%.0f%%", pct)
}

// FormatMs prints a time in ms, "—" when there is none.
func FormatMs(v float64, raw bool) string {
	if math.IsNaN(v) {
		return "—"
	}
	return FormatNum(v, raw)
}

// FormatNum prints a number with the precision a table needs (raw: every
// digit, for CSV), "—" (raw: empty) when there is none.
func FormatNum(v float64, raw bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if raw {
			return "" // CSV: an empty cell, not a glyph scripts must know
		}
		return "—"
	}
	if raw {
		return fmt.Sprintf("%.6g", v)
	}
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// IsCount reports whether a metric's unit counts things (requests, tokens):
// such values print as integers, never "5.00".
func (m *Metric) IsCount() bool { return m.Unit == "requests" || m.Unit == "tokens" }

// Columns are the metric's table columns: its name with each of its
// statistics ("ttft_p50"), the bare name for the "" statistic.
func (m *Metric) Columns() []string { return statNames(m) }

// FormatCount prints a count: a whole number as an integer ("1492", like
// the other figures of a table, without separators), and a count that is
// not whole (a median between two counts, a mean) as FormatTPS does; with
// the ±% of its interval, as FormatTPS, when it has one.
func FormatCount(v Value, raw bool) string {
	if !v.Valid() || math.IsInf(v.Value, 0) {
		if raw {
			return ""
		}
		return "—"
	}
	if v.Value != math.Trunc(v.Value) {
		if raw {
			return fmt.Sprintf("%.6g", v.Value)
		}
		return FormatTPS(v, false)
	}
	s := fmt.Sprintf("%d", int64(v.Value))
	if raw {
		return s
	}
	return s + plusMinus(v)
}

// GroupDigits writes n with a comma between thousands: 5000 → "5,000".
func GroupDigits(n int64) string {
	s := fmt.Sprintf("%d", n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatMetric prints the value of a metric column (name with its
// statistic suffix): counts as integers, the rest as FormatTPS.
func FormatMetric(name string, v Value, raw bool) string {
	if m, _, err := LookupMetric(name); err == nil && m.IsCount() {
		return FormatCount(v, raw)
	}
	if raw {
		return FormatNum(v.Value, true)
	}
	return FormatTPS(v, false)
}
