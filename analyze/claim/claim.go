package claim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/safetext"
)

// Claim is one written statement about a metric:
//
//	metric[_stat]{key=value,…} op number[unit]
//
// for example `per_stream_tps{concurrency=1} >= 490` or
// `ttft_p99{concurrency=32,label=vllm} < 2.6s`. Ops are >=, >, <=, <, ==.
// Time metrics take ns, us, ms, s and m suffixes (bare numbers are ms);
// rate metrics accept tok/s or req/s matching their unit.
type Claim struct {
	Text     string            // as written, without its comment
	Comment  string            // the text after #, if any
	Metric   string            // with its statistic suffix
	Selector map[string]string // canonical key → value
	Op       string
	Bound    float64 // in the metric's unit (ms for times)
	Line     int     // 1-based line in a claims file; 0 on the command line
}

// ParseError is a claim that cannot be read: the claim as written and
// what is wrong with it. It is a type, not only text, so that a caller
// that took the claim from a flag or a file line can say where it came
// from in its own words, and reach Err (an unknown metric is LookupMetric's
// *fielderr.Error) to word that for its users too.
type ParseError struct {
	Text string // the claim, without its comment
	Line int    // its 1-based line in a claims file; 0 when not from one
	Err  error  // what is wrong with it
}

func (e *ParseError) Error() string {
	msg := e.Err.Error()
	if e.Text != "" {
		msg = fmt.Sprintf("claim %q: %s", e.Text, msg)
	}
	if e.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", e.Line, msg)
	}
	return msg
}

func (e *ParseError) Unwrap() error { return e.Err }

// ParseClaim parses one claim. Text after # is a comment. Its errors are
// *ParseError.
func ParseClaim(s string) (Claim, error) {
	c, err := parseClaim(s)
	if err != nil {
		return c, &ParseError{Text: c.Text, Err: err}
	}
	return c, nil
}

func parseClaim(s string) (Claim, error) {
	comment := ""
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, comment = s[:i], strings.TrimSpace(s[i+1:])
	}
	s = strings.TrimSpace(s)
	c := Claim{Text: s, Comment: comment, Selector: map[string]string{}}
	if s == "" {
		return c, errors.New("empty claim: write e.g. 'per_stream_tps{concurrency=1} >= 490'")
	}
	// metric name
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '-' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9' || s[i] == '.' && i > 0 && s[i-1] >= '0' && s[i-1] <= '9') {
		i++
	}
	// per-stream-tps, as the flags spell words, is per_stream_tps.
	c.Metric = strings.ReplaceAll(s[:i], "-", "_")
	if c.Metric == "" {
		return c, errors.New("start with a metric name such as per_stream_tps")
	}
	m, _, err := analyze.LookupMetric(c.Metric)
	if err != nil {
		return c, err
	}
	rest := strings.TrimLeft(s[i:], " \t")
	if strings.HasPrefix(rest, "{") {
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return c, errors.New("the selector has no closing }")
		}
		for _, kv := range strings.Split(rest[1:end], ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return c, fmt.Errorf("selector part %q must be key=value", kv)
			}
			key, err := analyze.NormalizeKey(k)
			if err != nil {
				return c, err
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			if v == "" {
				return c, fmt.Errorf("key %s has an empty value", key)
			}
			if key != analyze.KeyLabel && key != analyze.KeyPhase {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return c, fmt.Errorf("%s=%s must be a whole number", key, v)
				}
				v = strconv.Itoa(n)
			}
			if _, dup := c.Selector[key]; dup {
				return c, fmt.Errorf("key %s given twice", key)
			}
			c.Selector[key] = v
		}
		rest = strings.TrimLeft(rest[end+1:], " \t")
	}
	for _, op := range []string{">=", "<=", "==", ">", "<"} {
		if strings.HasPrefix(rest, op) {
			c.Op = op
			rest = strings.TrimSpace(rest[len(op):])
			break
		}
	}
	if c.Op == "" {
		return c, errors.New("expected one of >= > <= < == after the metric")
	}
	c.Bound, err = parseBound(rest, m)
	if err != nil {
		return c, err
	}
	return c, nil
}

func parseBound(s string, m *analyze.Metric) (float64, error) {
	j := 0
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == '-' || s[j] == '+' || s[j] == 'e' || s[j] == 'E' || s[j] == '_' || s[j] == ',') {
		// 'e' only counts inside a number, not as a unit's start
		if (s[j] == 'e' || s[j] == 'E') && (j == 0 || j+1 >= len(s) || !(s[j+1] >= '0' && s[j+1] <= '9' || s[j+1] == '-' || s[j+1] == '+')) {
			break
		}
		j++
	}
	num := strings.NewReplacer("_", "", ",", "").Replace(s[:j])
	unit := strings.TrimSpace(s[j:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if m.IsTimeUnit() {
			return 0, fmt.Errorf("bound %q is not a number: write a time with its unit, e.g. 500ms or 2s", s)
		}
		return 0, fmt.Errorf("bound %q is not a number: write one such as 40 or 0.95", s)
	}
	if m.IsTimeUnit() {
		scale := map[string]float64{"": 1, "ms": 1, "s": 1000, "us": 1e-3, "µs": 1e-3, "ns": 1e-6, "m": 60000, "min": 60000}
		f, ok := scale[unit]
		if !ok {
			return 0, fmt.Errorf("unit %q for the time metric %s: use ns, us, ms, s or m", unit, m.Name)
		}
		return v * f, nil
	}
	switch unit {
	case "", m.Unit:
		return v, nil
	case "x":
		if m.Unit == "x" {
			return v, nil
		}
	case "%":
		if m.Unit == "x" {
			return v / 100, nil
		}
	}
	return 0, fmt.Errorf("unit %q does not fit %s, measured in %s", unit, m.Name, m.Unit)
}

// ParseClaims reads a claims file: one claim per line, # comments and
// blank lines ignored. A claim's error is a *ParseError naming its line.
func ParseClaims(r io.Reader) ([]Claim, error) {
	var out []Claim
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		body := t
		if i := strings.IndexByte(body, '#'); i >= 0 {
			body = body[:i]
		}
		if strings.TrimSpace(body) == "" {
			continue
		}
		c, err := ParseClaim(t)
		if err != nil {
			pe := err.(*ParseError)
			pe.Line = line
			return nil, pe
		}
		c.Line = line
		out = append(out, c)
	}
	return out, sc.Err()
}

// Verdicts.
const (
	Holds        = "holds"
	DoesNotHold  = "does not hold"
	Inconclusive = "inconclusive"
)

// MinSamples is the fewest samples behind a value before a verdict other
// than inconclusive is given.
const MinSamples = 3

// CheckOptions tune how strict Check is.
type CheckOptions struct {
	// MinSamples is the fewest samples for a verdict (0 = MinSamples).
	MinSamples int
	// AcceptPoint judges on the measured value itself when there are too
	// few samples for a bounded interval — a single run, as most published
	// figures are. The verdict's reason says so.
	AcceptPoint bool
	// AcceptPartial judges claims over traces that hold fewer requests
	// than their run planned (stopped or cut off); otherwise such a claim
	// is at most inconclusive: the requests never sent might have changed it.
	AcceptPartial bool
}

// Verdict is a claim checked against traces.
type Verdict struct {
	Claim    Claim
	Text     string
	Verdict  string
	Measured float64
	Lo       float64
	Hi       float64
	N        int64
	Unit     string
	Reason   string
	Warnings []string
}

// Check evaluates a claim: it merges every run the selector matches and
// compares the metric's interval (or its value, for statistics without one)
// to the bound. The claim holds only when the whole interval satisfies it,
// fails only when none of it does, and is inconclusive otherwise or with
// fewer than minSamples samples.
func Check(res *analyze.Result, c Claim, o CheckOptions) Verdict {
	v := check(res, c, o)
	if p := res.Partial(); len(p) > 0 && !o.AcceptPartial && v.Verdict != Inconclusive {
		v.Reason = fmt.Sprintf("would be %q, but %s; pass --accept-partial to judge it anyway", v.Verdict, strings.Join(p, "; "))
		v.Verdict = Inconclusive
	}
	return v
}

func check(res *analyze.Result, c Claim, o CheckOptions) Verdict {
	minSamples := o.MinSamples
	if minSamples < 1 {
		minSamples = MinSamples
	}
	m, stat, _ := analyze.LookupMetric(c.Metric)
	v := Verdict{Claim: c, Text: c.Text, Unit: m.Unit, Measured: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	res.Want(c.Metric) // any percentile: computed for the groups built now
	g := res.Select(c.Selector)
	if g == nil {
		v.Verdict, v.Reason = Inconclusive, fmt.Sprintf("no run matches %s", sortedSel(c.Selector))
		return v
	}
	val, ok := g.Values[c.Metric]
	v.Measured, v.N = val.Value, val.N
	for _, w := range g.Warnings {
		v.Warnings = append(v.Warnings, w.Code)
	}
	if labels := g.Labels(); len(labels) > 1 {
		// Several servers pooled into one number is rarely what a claim
		// means; say so next to the verdict.
		v.Warnings = append(v.Warnings, fmt.Sprintf("pools %d labels; add label=… to the selector", len(labels)))
	}
	if !ok || !val.Valid() {
		v.Verdict, v.Reason = Inconclusive, "the metric could not be computed from the matching requests"
		return v
	}
	lo, hi := val.Value, val.Value
	pointOnly := false
	if val.HasInterval() {
		lo, hi = val.Lo, val.Hi
		v.Lo, v.Hi = lo, hi
		if o.AcceptPoint && (math.IsInf(lo, 0) || math.IsInf(hi, 0)) {
			lo, hi = val.Value, val.Value
			pointOnly = true
		}
	}
	minN := int64(minSamples)
	if m.Scope == analyze.Count || m.Scope == analyze.PerGroup {
		minN = 1 // counts are exact
	}
	if m.Scope == analyze.PerGroup && !o.AcceptPoint {
		// speedup is a ratio of two medians over a few runs each: no
		// interval is computed for it, so its value is a point estimate,
		// not an exact one.
		v.Verdict, v.Reason = Inconclusive, "a ratio of medians without an interval (a point estimate): pass --accept-point to judge it on the value itself"
		return v
	}
	// One rule for how many samples a verdict needs, and the reason
	// states that number. Without --accept-point a verdict needs the
	// statistic's 95% interval bounded on both sides, and an order
	// statistic's interval is unbounded below a fixed count (6 for a
	// median, 36 for a p10 or p90, 368 for a p99), whatever --min-samples
	// says; --min-samples (default MinSamples) is a floor on top, and the
	// only rule for values judged without an interval (_mean, _min, _max,
	// and point estimates under --accept-point). A reason saying "at
	// least 3" next to "4 more would bound it" (2 in hand: 6 needed) told
	// the user two different numbers; the larger one is what the code
	// requires, so it is the one said.
	need, forInterval := minN, false
	if !o.AcceptPoint && val.HasInterval() && (math.IsInf(val.Lo, 0) || math.IsInf(val.Hi, 0)) {
		if k := toBound(m, stat); k > need && k > val.N {
			need, forInterval = k, true
		}
	}
	if val.N < need {
		v.Verdict, v.Reason = Inconclusive, tooFew(m, stat, val.N, need, forInterval, minN)
		return v
	}
	sat := func(x float64) bool {
		switch c.Op {
		case ">=":
			return x >= c.Bound
		case ">":
			return x > c.Bound
		case "<=":
			return x <= c.Bound
		case "<":
			return x < c.Bound
		}
		return x == c.Bound
	}
	switch {
	case c.Op == "==" && !val.HasInterval():
		if val.Value == c.Bound {
			v.Verdict = Holds
		} else {
			v.Verdict = DoesNotHold
		}
	case c.Op == "==":
		if lo == c.Bound && hi == c.Bound {
			v.Verdict = Holds
		} else if lo <= c.Bound && c.Bound <= hi {
			v.Verdict, v.Reason = Inconclusive, "the interval contains the value but is wider than it"
		} else {
			v.Verdict = DoesNotHold
		}
	case sat(lo) && sat(hi):
		v.Verdict = Holds
	case !sat(lo) && !sat(hi):
		v.Verdict = DoesNotHold
	default:
		v.Verdict = Inconclusive
		v.Reason = "the 95% interval straddles the bound"
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			v.Reason = "too few samples to bound the 95% interval" + moreToBound(m, stat, val.N)
		}
	}
	if v.Reason == "" {
		if pointOnly {
			v.Reason = "the measured value itself (point estimates accepted): too few samples for a 95% interval"
		} else if val.HasInterval() {
			v.Reason = "the whole 95% interval is on one side of the bound"
		} else if m.Scope == analyze.PerGroup {
			v.Reason = "the measured value itself (point estimates accepted): a ratio of medians has no interval here"
		} else {
			v.Reason = "exact value"
		}
	}
	return v
}

// quantileOf is the quantile an order-statistic interval is computed for
// ("" is the median), and its name in a reason; ok is false for
// statistics without one (mean, min, max) and for fits across inputs.
func quantileOf(m *analyze.Metric, stat string) (q float64, name string, ok bool) {
	if m.Scope == analyze.AcrossInputs {
		return 0, "", false // a fit's interval, not an order statistic's
	}
	switch stat {
	case "", "p50":
		return 0.5, "a median", true
	}
	if q, ok := analyze.ParsePercentile(stat); ok {
		return q, "a " + stat, true
	}
	return 0, "", false
}

// toBound is the fewest samples for which the statistic's 95%
// order-statistic interval is bounded on both sides (analyze's own ranks:
// a median needs 6, P(x(1) ≤ median ≤ x(6)) = 1 − 2·(1/2)⁶ = 0.969), or 0
// for statistics without one.
func toBound(m *analyze.Metric, stat string) int64 {
	q, _, ok := quantileOf(m, stat)
	if !ok {
		return 0
	}
	for k := int64(1); k <= 100000; k++ {
		if l, h := analyze.OrderCI(k, q, 0.95); l >= 1 && h <= k {
			return k
		}
	}
	return 0
}

// tooFew says why n samples give no verdict: how many are needed, by
// which rule (the interval's, or the --min-samples floor), and how many
// more runs or requests that is; for a per-run metric a sample is a run,
// so it counts repeats of the level.
func tooFew(m *analyze.Metric, stat string, n, need int64, forInterval bool, minN int64) string {
	what, verb := "a verdict", "give one"
	if forInterval {
		_, name, _ := quantileOf(m, stat)
		what, verb = "the 95% interval of "+name, "bound it"
	}
	reason := fmt.Sprintf("%d sample(s); %s needs at least %d", n, what, need) + more(m, n, need, verb)
	if forInterval && n >= minN {
		reason += ", or --accept-point judges the measured value itself"
	}
	return reason
}

// moreToBound says how many more samples than n would bound the
// statistic's 95% interval, for an interval left unbounded by a count
// the rule above let through; "" for statistics without an
// order-statistic interval.
func moreToBound(m *analyze.Metric, stat string, n int64) string {
	if k := toBound(m, stat); k > n {
		return more(m, n, k, "bound it")
	}
	return ""
}

// more says what need − n more samples of m are: runs of the level for a
// per-run metric, else successful requests or token gaps.
func more(m *analyze.Metric, n, need int64, verb string) string {
	switch m.Scope {
	case analyze.PerRun:
		return fmt.Sprintf(": %d more run(s) of this level (--repeats %d in all) would %s", need-n, need, verb)
	case analyze.PerRequest:
		return fmt.Sprintf(": %d more successful request(s) would %s", need-n, verb)
	case analyze.PerToken:
		return fmt.Sprintf(": %d more inter-token gap(s) would %s", need-n, verb)
	}
	return ""
}

func bound(x float64, count bool) string {
	switch {
	case math.IsInf(x, -1):
		return "−∞"
	case math.IsInf(x, 1):
		return "+∞"
	case count:
		// Counts as integers, as the measured value is.
		return analyze.FormatCount(analyze.Value{Value: x, Lo: math.NaN(), Hi: math.NaN()}, false)
	}
	return analyze.FormatNum(x, false)
}

func sortedSel(sel map[string]string) string {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+sel[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// RenderVerdicts prints one line per verdict.
func RenderVerdicts(w io.Writer, vs []Verdict) error {
	for _, v := range vs {
		count := v.Unit == "requests" || v.Unit == "tokens"
		interval := ""
		if !math.IsNaN(v.Lo) || !math.IsNaN(v.Hi) {
			interval = fmt.Sprintf(" [%s, %s]", bound(v.Lo, count), bound(v.Hi, count))
		}
		warn := ""
		if len(v.Warnings) > 0 {
			warn = "; warnings: " + strings.Join(v.Warnings, ", ")
		}
		measured := analyze.FormatNum(v.Measured, false)
		if v.Unit == "requests" || v.Unit == "tokens" {
			// Counts as integers (a median between two counts keeps its .5).
			measured = analyze.FormatCount(analyze.Value{Value: v.Measured, Lo: math.NaN(), Hi: math.NaN()}, false)
		}
		comment := ""
		if v.Claim.Comment != "" {
			comment = "  # " + v.Claim.Comment
		}
		if _, err := fmt.Fprintf(w, "%-13s %s — measured %s %s%s n=%d (%s%s)%s\n",
			strings.ToUpper(v.Verdict), v.Text, measured, v.Unit, interval, v.N, v.Reason, warn, comment); err != nil {
			return err
		}
	}
	return nil
}

// WriteVerdictsJSON writes {"schema": "llmreplay-check", "version": 1,
// "verdicts": [...]}; a value that could not be computed or a side of an
// interval that is unbounded is null.
func WriteVerdictsJSON(w io.Writer, vs []Verdict) error {
	type jv struct {
		Claim    string   `json:"claim"`
		Comment  string   `json:"comment,omitempty"`
		Line     int      `json:"line,omitempty"`
		Verdict  string   `json:"verdict"`
		Measured *float64 `json:"measured"`
		Lo       *float64 `json:"lo"`
		Hi       *float64 `json:"hi"`
		N        int64    `json:"n"`
		Unit     string   `json:"unit"`
		Reason   string   `json:"reason"`
		Warnings []string `json:"warnings,omitempty"`
	}
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	out := struct {
		Schema   string `json:"schema"`
		Version  int    `json:"version"`
		Verdicts []jv   `json:"verdicts"`
	}{Schema: "llmreplay-check", Version: 1, Verdicts: []jv{}}
	for _, v := range vs {
		out.Verdicts = append(out.Verdicts, jv{v.Text, v.Claim.Comment, v.Claim.Line, v.Verdict, num(v.Measured), num(v.Lo), num(v.Hi), v.N, v.Unit, v.Reason, v.Warnings})
	}
	// Reasons quote labels (often the server's model id): exact values,
	// with bidi and C1 controls as \u escapes (safetext.JSONWriter).
	enc := json.NewEncoder(safetext.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
