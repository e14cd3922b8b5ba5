package analyze

import "github.com/llmreplay/llmreplay/trace"

// AddRow adds rec as Add does and returns its per-request row (the row
// trace cat --requests prints) read from the same facts: one reading of
// the record, so a table of rows (export's requests) agrees with the
// analysis' tables on every request's TTFT, TPOT, speed and tokens.
// Warm-ups and requests never sent, which Add only counts, get a row too.
// rec is not kept.
func (t *TraceAcc) AddRow(rec *trace.Record) RequestRow {
	t.Add(rec)
	f := &t.a.f
	if rec.Warmup || rec.Error != nil && rec.Error.Class == trace.ErrNotSent {
		f.build(rec, t.counter, &t.a.defs) // Add built no facts for it
	}
	if t.rowPhases == nil {
		t.rowPhases = make(map[int]trace.Phase, len(t.header.Phases))
		for _, p := range t.header.Phases {
			t.rowPhases[p.Index] = p
		}
	}
	p, ok := t.rowPhases[rec.Phase]
	if !ok {
		p = trace.Phase{Index: rec.Phase}
	}
	return rowOf(f, rec, t.info.Label, p, &t.a.defs)
}
