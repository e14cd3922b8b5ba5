//go:build unix

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// prefillSuperlinearThroughTheBinary (a part of TestAgainstTheModel), how
// prefill scales: a long-input sweep says, without
// a calculator, that a server's prefill grows faster than the prompt. Two
// simulators with the vLLM profile, one with the quadratic-prefill fault
// (80 ns per token pair: +4.0 s at 10,000 tokens, +40 ms at 1,000, +0.4 ms
// at 100), the same sweep of 100, 1,000 and 10,000 input tokens at
// concurrency 1, five times, 4 output tokens each. Five, because
// a loaded machine delays a request now and then: under the race suite
// one of three 1,000-token requests took 217 ms, not 104, and the
// 1,000–10,000 interval's lower end fell below 1.2 (no warning); with five
// such requests one delay leaves it near 1.4 and two near 1.3. At 100 tokens TTFT is the
// fixed cost (36 ms of overhead and batch window), so over the whole sweep
// the fault's TTFT exponent is only ≈ 1.0; from 1,000 to 10,000 (a 10×
// range of its own: ≈ 96 and 4,223 ms) it is ≈ 1.64, and
// prefill_superlinear names that range (README's "How prefill scales" runs
// the same commands). The normal model's TTFT (36 ms plus
// 17.2 µs a token: ≈ 40, 56, 226 ms) grows as input^~0.4 and it does not.
func prefillSuperlinearThroughTheBinary(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	quad := startSim(t, bin, "--quadratic-prefill", "80ns")
	normal := startSim(t, bin)
	wl := buildWorkload(t, bin, dir, "--input-tokens", "100,1000,10000", "--max-tokens", "4",
		"--schedule", "burst:1", "--repeats", "5")
	traces := map[string]string{}
	for label, url := range map[string]string{"quad": quad, "normal": normal} {
		tr := filepath.Join(dir, label+".trace.zst")
		if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--label", label, "-o", tr); code != 0 {
			t.Fatalf("replay %s: exit %d\n%s", label, code, e)
		}
		traces[label] = tr
	}

	// The default table: the exponents under it, the warning for quad only.
	out, e, code := run(t, nil, bin, "analyze", traces["quad"], traces["normal"])
	if code != 0 {
		t.Fatalf("analyze: exit %d\n%s", code, e)
	}
	out = unwrapped(out)
	for _, w := range []string{"prefill scaling, quad at concurrency 1, input 100–10,000 tokens (15 requests): TTFT ∝ input^",
		"(steepest, 1,000–10,000 tokens: input^1.", "prefill scaling, normal at concurrency 1, input 100–10,000 tokens (15 requests): TTFT ∝ input^0.",
		"prefill tok/s ∝ input^", "from 1,000 to 10,000 input tokens at concurrency 1"} {
		if !strings.Contains(out, w) {
			t.Errorf("the table lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "prefill_superlinear") != 1 || !strings.Contains(out, "prefill_superlinear {label=quad,concurrency=1}") {
		t.Errorf("want prefill_superlinear for quad alone:\n%s", out)
	}

	// The JSON: both fits with their intervals, and the warning's range.
	js, _, code := run(t, nil, bin, "analyze", "--format", "json", traces["quad"], traces["normal"])
	type fit struct {
		Exponent struct {
			Value, Lo, Hi float64
			N             int
		} `json:"exponent"`
		InputTokens []int `json:"input_tokens"`
	}
	var doc struct {
		PrefillScaling []struct {
			fit
			Label    string `json:"label"`
			Metric   string `json:"metric"`
			Steepest *fit   `json:"steepest"`
		} `json:"prefill_scaling"`
		Warnings []struct {
			Code     string         `json:"code"`
			Keys     map[string]any `json:"keys"`
			Evidence map[string]any `json:"evidence"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
		t.Fatalf("analyze --format json: exit %d, %v", code, err)
	}
	seen := map[string]bool{}
	for _, s := range doc.PrefillScaling {
		if s.Metric != "ttft" {
			continue
		}
		seen[s.Label] = true
		if len(s.InputTokens) != 3 || s.Exponent.N != 15 || !(s.Exponent.Lo < s.Exponent.Value && s.Exponent.Value < s.Exponent.Hi) {
			t.Errorf("%s: %+v", s.Label, s)
		}
		switch s.Label {
		case "quad":
			// From 1,000 to 10,000: ln(4,223/96)/ln 10 ≈ 1.64; two lengths
			// of five requests each, so the interval is the scatter's.
			if st := s.Steepest; st == nil || len(st.InputTokens) != 2 || st.InputTokens[0] != 1000 || st.Exponent.Lo <= 1.2 || st.Exponent.Value > 2 {
				t.Errorf("quad: steepest TTFT exponent %+v, want clearly above 1 and at most 2 from 1,000 to 10,000", st)
			}
		case "normal":
			if s.Exponent.Value >= 1 || s.Exponent.Value <= 0.1 {
				t.Errorf("normal: ttft exponent %+v, want between 0.1 and 1", s.Exponent)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("prefill_scaling has TTFT fits for %v, want quad and normal", seen)
	}
	n := 0
	for _, w := range doc.Warnings {
		if w.Code == "prefill_superlinear" {
			n++
			if w.Keys["label"] != "quad" || w.Evidence["ttft_exponent_lo"].(float64) <= 1.2 {
				t.Errorf("prefill_superlinear %v %v", w.Keys, w.Evidence)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d prefill_superlinear warnings in the JSON, want 1", n)
	}

	// A claim on the exponent gets a verdict.
	out, _, code = run(t, nil, bin, "check", traces["normal"], "--claim", "ttft_exponent{label=normal} <= 1.2")
	if code != 0 || !strings.HasPrefix(out, "HOLDS         ttft_exponent{label=normal} <= 1.2") {
		t.Errorf("check on the exponent: exit %d\n%s", code, out)
	}
}

// --list-metrics shows the exponents with their definitions, and sim says
// the fault is on.
func TestPrefillExponentListed(t *testing.T) {
	out, _, err := runCLI(t, nil, "analyze", "--list-metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"ttft_exponent [exponent]\n    how TTFT scales with input length", "prefill_tps_exponent [exponent]"} {
		if !strings.Contains(out, w) {
			t.Errorf("--list-metrics lacks %q", w)
		}
	}
	out, _, _ = runCLI(t, nil, "sim", "--help")
	if !strings.Contains(out, "--quadratic-prefill") {
		t.Error("sim --help does not offer --quadratic-prefill")
	}
	_, e, err := runCLI(t, nil, "sim", "--profile", "fast", "--quadratic-prefill", "50ns", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(e+err.Error(), "no engine model") {
		t.Errorf("the fast profile with a quadratic prefill: %v %s", err, e)
	}
}
