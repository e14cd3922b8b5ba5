//go:build unix

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Issue #12 item 6b, "how prefill scales": a long-input sweep says, without
// a calculator, that a server's prefill grows faster than the prompt. Two
// simulators with the vLLM profile, one with the quadratic-prefill fault
// (80 ns per token pair: +4.0 s at 10,000 tokens, +0.36 s at 3,000, +40 ms
// at 1,000), the same sweep of 1,000, 3,000 and 10,000 input tokens (a 10×
// range) at concurrency 1, twice. The fault's TTFT grows as input^~1.65,
// so prefill_superlinear fires; the normal model's TTFT (36 ms of fixed
// cost plus 17.2 µs a token) grows as input^~0.6 and it does not. Input
// lengths start at 1,000 because below that the fixed cost, not the
// prefill, makes up TTFT (docs/METRICS.md); 4 output tokens keep it short.
func TestPrefillSuperlinearThroughTheBinary(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	quad := startSim(t, bin, "--quadratic-prefill", "80ns")
	normal := startSim(t, bin)
	wl := filepath.Join(dir, "long.workload.zst")
	if _, e, code := run(t, nil, bin, "workload", "build", "--input-tokens", "1000,3000,10000", "--max-tokens", "4",
		"--schedule", "burst:1", "--repeats", "2", "-o", wl); code != 0 {
		t.Fatalf("workload build: exit %d\n%s", code, e)
	}
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
	for _, w := range []string{"prefill scaling, quad at concurrency 1, input 1,000–10,000 tokens (6 requests): TTFT ∝ input^",
		"prefill scaling, normal at concurrency 1, input 1,000–10,000 tokens (6 requests): TTFT ∝ input^", "prefill tok/s ∝ input^"} {
		if !strings.Contains(out, w) {
			t.Errorf("the table lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "prefill_superlinear") != 1 || !strings.Contains(out, "prefill_superlinear {label=quad,concurrency=1}") {
		t.Errorf("want prefill_superlinear for quad alone:\n%s", out)
	}

	// The JSON: both fits with their intervals.
	js, _, code := run(t, nil, bin, "analyze", "--format", "json", traces["quad"], traces["normal"])
	var doc struct {
		PrefillScaling []struct {
			Label    string `json:"label"`
			Metric   string `json:"metric"`
			Exponent struct {
				Value, Lo, Hi float64
				N             int
			} `json:"exponent"`
			InputTokens []int `json:"input_tokens"`
		} `json:"prefill_scaling"`
		Warnings []struct {
			Code string         `json:"code"`
			Keys map[string]any `json:"keys"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
		t.Fatalf("analyze --format json: exit %d, %v", code, err)
	}
	got := map[string]float64{}
	for _, s := range doc.PrefillScaling {
		if s.Metric != "ttft" {
			continue
		}
		got[s.Label] = s.Exponent.Value
		if len(s.InputTokens) != 3 || s.Exponent.N != 6 || !(s.Exponent.Lo < s.Exponent.Value && s.Exponent.Value < s.Exponent.Hi) {
			t.Errorf("%s: %+v", s.Label, s)
		}
		switch s.Label {
		case "quad":
			// The model's TTFTs (≈ 96, 454, 4,223 ms) give k ≈ 1.65, and
			// the curvature's residuals an interval of about ±0.17.
			if s.Exponent.Lo <= 1.2 || s.Exponent.Value > 2 {
				t.Errorf("quad: ttft exponent %+v, want clearly above 1 and at most 2", s.Exponent)
			}
		case "normal":
			// ≈ 56, 96, 226 ms: k ≈ 0.6.
			if s.Exponent.Value >= 1 || s.Exponent.Value <= 0.3 {
				t.Errorf("normal: ttft exponent %+v, want between 0.3 and 1", s.Exponent)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("prefill_scaling has TTFT fits for %v, want quad and normal", got)
	}
	n := 0
	for _, w := range doc.Warnings {
		if w.Code == "prefill_superlinear" {
			n++
			if w.Keys["label"] != "quad" {
				t.Errorf("prefill_superlinear for %v", w.Keys)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d prefill_superlinear warnings in the JSON, want 1", n)
	}

	// A claim on the exponent gets a verdict.
	out, _, code = run(t, nil, bin, "check", traces["normal"], traces["quad"],
		"--claim", "ttft_exponent{label=normal} <= 1.2", "--claim", "ttft_exponent{label=quad} <= 1.2")
	if code != 1 || !strings.HasPrefix(out, "HOLDS         ttft_exponent{label=normal} <= 1.2") || !strings.Contains(out, "DOES NOT HOLD ttft_exponent{label=quad} <= 1.2") {
		t.Errorf("check on the exponents: exit %d\n%s", code, out)
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
