package capacity

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/golden"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// answers are hand-made searches, one per outcome. The found one probes
// 1, 4, 2 and 3 users (kept out of order: the table sorts them) under
// ttft_p90<=1s and goodput>=90% at simulator time scale 0.1 (bounds
// 100 ms and 90%); its knee lies at 2, below the answer 3.
func answers(t *testing.T) map[string]Answer {
	slo := mustSLO(t, "ttft_p90<=1s,goodput>=90%")
	conc := Config{SLO: slo.Scaled(0.1), Lo: 1, Hi: 4, Integer: true, PerRound: true, MaxErrorRate: DefaultMaxErrorRate}
	term := func(v, lo, hi float64) TermResult { return TermResult{Value: v, Lo: lo, Hi: hi} }
	probes := []Probe{
		{X: 1, Requests: 160, Rounds: 8, Verdict: Pass, Terms: []TermResult{term(20, 18, 36.5), term(1, 0.98, 1)}, TPS: 1000},
		{X: 4, Requests: 160, Failed: 2, Rounds: 8, Verdict: Fail, Terms: []TermResult{term(150, 140, 170), term(0.5, 0.4, 0.6)}, TPS: 1900},
		{X: 2, Requests: 160, Rounds: 8, Verdict: Pass, Terms: []TermResult{term(40, 38, 45), term(0.99, 0.97, 1)}, TPS: 1800},
		{X: 3, Requests: 168, Rounds: 8, Verdict: Pass, Terms: []TermResult{term(80.25, 70, 95), term(0.95, 0.92, 0.97)}, TPS: 1850},
	}
	found := &Result{Outcome: Found, Answer: 3, Lo: 3, Hi: 3, Probes: probes, Requests: 648, Elapsed: 24 * time.Second,
		Knee: Knee{Found: true, X: 2, Lo: 1, TPS: 1800, MaxTPS: 1900}}
	nan := math.NaN()
	undecided := []Probe{{X: 1, Requests: 20, Rounds: 12, Verdict: Undecided, Terms: []TermResult{term(95, 60, 130), term(nan, nan, nan)}, TPS: 0}}
	rate := mustSLO(t, "ttft_p90<=500ms")
	rateCfg := Config{SLO: rate, Lo: 0.5, Hi: 8, PerRound: true}
	return map[string]Answer{
		"found": {Result: found, Axis: AxisConcurrency, SLO: slo, Search: conc, TimeScale: 0.1},
		"budget": {Result: &Result{Outcome: Budget, Answer: 1, Lo: 0, Hi: 4, Probes: undecided, Requests: 20, Reason: BudgetReason,
			Knee: Knee{Reason: "no probe measured a throughput"}}, Axis: AxisConcurrency, SLO: slo, Search: conc, TimeScale: 0.1},
		"undecided": {Result: &Result{Outcome: NoDecision, Answer: 1, Lo: 1, Hi: 4, Probes: undecided, Requests: 20, Reason: NoDecisionReason,
			Knee: Knee{Reason: "no probe measured a throughput"}}, Axis: AxisConcurrency, SLO: slo, Search: conc, TimeScale: 0.1},
		"errors": {Result: &Result{Outcome: ErrorsHit, Answer: 2, Lo: 2, Hi: 4, Probes: probes[:3], Requests: 480, Reason: "4 users: 2 of 160 requests failed",
			Knee: Knee{Found: true, X: 2, Lo: 1, TPS: 1800, MaxTPS: 1900}}, Axis: AxisConcurrency, SLO: slo, Search: conc, TimeScale: 0.1},
		"none-meets": {Result: &Result{Outcome: NoneMeets, Lo: 0, Hi: 0.5, Probes: []Probe{{X: 0.5, Requests: 30, Rounds: 8, Verdict: Fail,
			Terms: []TermResult{term(900, 800, 1000)}, TPS: 12.5}}, Requests: 30, Reason: "the lowest level, 0.5, fails",
			Knee: Knee{Found: true, X: 0.5, TPS: 12.5, MaxTPS: 12.5, Reason: "one level probed: no curve to find a knee on"}}, Axis: AxisRate, SLO: rate, Search: rateCfg, TimeScale: 1},
		"all-meet": {Result: &Result{Outcome: AllMeet, Answer: 8, Lo: 8, Hi: 8, Probes: []Probe{{X: 8, Requests: 160, Rounds: 8, Verdict: Pass,
			Terms: []TermResult{term(2.5, 1.25, 6)}, TPS: 151}, {X: 0.5, Requests: 160, Rounds: 8, Verdict: Pass, Terms: []TermResult{term(4.9, 1.8, 269)}, TPS: 17}},
			Requests: 320, Elapsed: 382300 * time.Millisecond, Reason: "every level up to the highest, 8, meets the SLO",
			Knee: Knee{X: 8, Lo: 0.5, TPS: 151, MaxTPS: 151, Reason: "aggregate throughput was still rising at the highest level probed"}}, Axis: AxisRate, SLO: rate, Search: rateCfg, TimeScale: 1},
	}
}

// TestAnswerText: each outcome's table and answer as capacity prints
// them, against its golden file; and, worked out by hand, what the found
// search shows.
func TestAnswerText(t *testing.T) {
	for name, a := range answers(t) {
		var b bytes.Buffer
		a.WriteText(&b)
		golden.Check(t, filepath.Join("testdata", "answer-"+name+".golden"), b.Bytes(), *update, "go test ./capacity -update")
	}
	var b strings.Builder
	answers(t)["found"].WriteText(&b)
	out := b.String()
	testutil.Contains(t, "answer", out,
		// The asked SLO, and the scaled bounds it was judged by.
		"SLO: ttft_p90<=1s,goodput>=90% (simulator time scale 0.1: bounds scaled alike to ttft_p90<=100ms,goodput>=90%;",
		// The levels in order, whatever order they were probed in.
		"\n1   ", "\n2   ", "\n3   ", "\n4   ",
		"max concurrency meeting the SLO: 3 (95% interval 3)\n  at 3: ttft_p90 80.2 ms, goodput 95.0%, aggregate 1850 tok/s\n",
		// 1800 of 1900 tok/s is 95%, the knee at 2 between 1 and 2.
		"knee of aggregate throughput: 2 (between 1 and 2): 1800 tok/s, 95% of the highest probed (1900 tok/s)",
		"the server saturates first",
		// A 1..4 sweep of 8 rounds per level: 8·(20 + 2·10 + 3·7 + 4·5) = 648.
		"searched 4 levels with 648 measured requests in 24.0s (a full 1..4 sweep at the same per-level confidence: 648)",
	)
	if i1, i4 := strings.Index(out, "\n1   "), strings.Index(out, "\n4   "); i1 > i4 {
		t.Errorf("levels not in order:\n%s", out)
	}
}

// TestAnswerLines: the answer lines alone, named by trace and SLO asked.
func TestAnswerLines(t *testing.T) {
	got := answers(t)["found"].Lines("cap.trace.zst")
	want := []string{
		"capacity (cap.trace.zst, SLO ttft_p90<=1s,goodput>=90%): max concurrency meeting the SLO: 3 (95% interval 3)",
		"capacity (cap.trace.zst, SLO ttft_p90<=1s,goodput>=90%): knee of aggregate throughput: 2 (between 1 and 2): 1800 tok/s, 95% of the highest probed (1900 tok/s)",
	}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || !strings.Contains(got[2], "the server saturates first") {
		t.Errorf("lines:\n%s", strings.Join(got, "\n"))
	}
}

// TestAnswerJSON: analyze's JSON list holds the answer, the interval,
// the knee and each level's terms by name; a missing value is null.
func TestAnswerJSON(t *testing.T) {
	as := answers(t)
	var b bytes.Buffer
	views := []View{{Name: "a", Answer: as["found"]}, {Name: "b", Answer: as["undecided"], Partial: true}}
	if err := json.NewEncoder(&b).Encode([]JSON{views[0].JSON(), views[1].JSON()}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	f, u := got[0], got[1]
	if f["answer"] != 3.0 || f["slo"] != "ttft_p90<=1s,goodput>=90%" || f["slo_at_time_scale"] != "ttft_p90<=100ms,goodput>=90%" || f["outcome"] != "found" {
		t.Errorf("found: %v", f)
	}
	probes := f["probes"].([]any)
	if x := probes[0].(map[string]any)["x"]; x != 1.0 || len(probes) != 4 {
		t.Errorf("probes not sorted by level: %v", probes)
	}
	terms := probes[2].(map[string]any)["terms"].([]any)
	if terms[0].(map[string]any)["term"] != "ttft_p90" || terms[1].(map[string]any)["term"] != "goodput" {
		t.Errorf("terms: %v", terms)
	}
	uterm := u["probes"].([]any)[0].(map[string]any)["terms"].([]any)[1].(map[string]any)
	if uterm["value"] != nil || u["partial"] != true || u["knee"].(map[string]any)["x"] != nil {
		t.Errorf("undecided: %v", u)
	}
}

// TestAnswerCharts: one chart per SLO term with the bound and the
// answer marked, then throughput with the knee; ids apart per view.
func TestAnswerCharts(t *testing.T) {
	as := answers(t)
	charts := ViewCharts([]View{{Name: "a", Answer: as["found"]}, {Name: "b", Answer: as["all-meet"]}})
	var ids []string
	for _, c := range charts {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, " "); got != "capacity-0 capacity-1 capacity-throughput capacity-1-0 capacity-throughput-1" {
		t.Fatalf("chart ids %s", got)
	}
	ttft := charts[0]
	if len(ttft.Series) != 3 || ttft.Series[1].Name != "SLO bound ttft_p90<=100ms" || ttft.Series[2].Points[0].X != 3 {
		t.Errorf("ttft chart: %+v", ttft.Series)
	}
	if ttft.Note != "Answer: 3 users (95% interval 3–3)." || !strings.HasSuffix(ttft.Title, "(a)") {
		t.Errorf("note %q, title %q", ttft.Note, ttft.Title)
	}
	if p := charts[0].Series[0].Points; p[0].X != 1 || p[3].X != 4 {
		t.Errorf("points not in level order: %+v", p)
	}
	if n := charts[4].Note; n != "Knee: not found (aggregate throughput was still rising at the highest level probed)." {
		t.Errorf("rate knee note %q", n)
	}
}
