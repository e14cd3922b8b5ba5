package analyze

import (
	"fmt"
	"math"
)

// Number formatting shared by the renderers and the claim checker: one
// place decides how a tok/s or ms value reads.

// FormatTPS prints a median with its interval as ±% of the center, the way
// benchstat does, when the interval is bounded.
func FormatTPS(v Value, raw bool) string {
	if !v.Valid() {
		return "—"
	}
	s := FormatNum(v.Value, raw)
	if !raw && v.N > 1 && v.HasInterval() && !math.IsInf(v.Lo, 0) && !math.IsInf(v.Hi, 0) && v.Value != 0 {
		pct := math.Max(v.Value-v.Lo, v.Hi-v.Value) / math.Abs(v.Value) * 100
		if pct >= 0.5 {
			s += fmt.Sprintf(" ±%.0f%%", pct)
		}
	}
	return s
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
