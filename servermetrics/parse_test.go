package servermetrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func find(samples []trace.Sample, name, labels string) (float64, bool) {
	for _, s := range samples {
		if s.Name == name && s.Labels == labels {
			return s.Value, true
		}
	}
	return 0, false
}

// TestParseFixtures: each engine's /metrics body (testdata, written from
// the engine's documented names) parses with every sample kept, and its
// known names map to the values the fixture's comment states.
func TestParseFixtures(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		file, ctype, engine string
		samples             int
		// running, waiting, kv, preemptions, prefix queries, hits, hit rate
		want [7]float64
	}{
		// vLLM: 16 series: 2 gc + rss + 8 gauges and counters + 3 buckets,
		// count and sum.
		{"vllm.metrics", "text/plain; version=0.0.4; charset=utf-8", "vllm", 16, [7]float64{3, 5, 0.875, 2, 4800, 1200, nan}},
		{"vllm.openmetrics", "application/openmetrics-text; version=1.0.0; charset=utf-8", "vllm", 12, [7]float64{3, 5, 0.875, 2, 4800, 1200, nan}},
		{"sglang.metrics", "text/plain; version=0.0.4", "sglang", 12, [7]float64{16, 4, 0.62, nan, nan, nan, 0.25}},
		{"llamacpp.metrics", "text/plain; version=0.0.4", "llama.cpp", 12, [7]float64{2, 6, 0.25, nan, nan, nan, nan}},
		{"tgi.metrics", "", "tgi", 14, [7]float64{8, 3, nan, nan, nan, nan, nan}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			samples, err := Parse(readFixture(t, tc.file), tc.ctype)
			if err != nil {
				t.Fatal(err)
			}
			if len(samples) != tc.samples {
				for _, s := range samples {
					t.Logf("%s{%s} %v", s.Name, s.Labels, s.Value)
				}
				t.Errorf("%d samples, want %d", len(samples), tc.samples)
			}
			st := Read(&trace.Scrape{Source: trace.SourceMetrics, Samples: samples})
			if st.Engine != tc.engine {
				t.Errorf("engine %q, want %q", st.Engine, tc.engine)
			}
			for i, m := range []Meaning{Running, Waiting, KVUsage, Preemptions, PrefixQueries, PrefixHits, PrefixHitRate} {
				got, want := st.Value[m], tc.want[i]
				if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && got != want) {
					t.Errorf("%s = %v, want %v", m, got, want)
				}
			}
			if st.Has(RSS) {
				t.Error("an engine's own process_resident_memory_bytes was read as the watched process's")
			}
		})
	}
}

// TestParseKeepsEverything: labels are kept in the text format's form,
// sorted, escaped; histograms are flattened; unknown names are kept.
func TestParseKeepsEverything(t *testing.T) {
	samples, err := Parse(readFixture(t, "vllm.metrics"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"vllm:time_to_first_token_seconds_bucket", `engine="0",le="0.1",model_name="Qwen/Qwen3-0.6B"`, 4},
		{"vllm:time_to_first_token_seconds_sum", `engine="0",model_name="Qwen/Qwen3-0.6B"`, 0.93},
		{"python_gc_objects_collected_total", `generation="1"`, 678},
		{"process_resident_memory_bytes", "", 1.2345728e+09},
	} {
		if v, ok := find(samples, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s{%s} = %v (found %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	odd, err := Parse([]byte("m{b=\"x\\\"y\\\\z\\n\",a=\"1\"} NaN\nn +Inf\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(odd) != 2 || odd[0].Labels != `a="1",b="x\"y\\z\n"` || !math.IsNaN(odd[0].Value) || !math.IsInf(odd[1].Value, 1) {
		t.Errorf("got %+v", odd)
	}
}

// TestParseRefuses: what is not metrics says what it is, in one line.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, body, ctype, want string
	}{
		{"html", "<!DOCTYPE html><html><body>Login</body></html>", "text/html; charset=utf-8", "HTML page"},
		{"html as text", "\n  <html><head>", "text/plain", "HTML page"},
		{"json", `{"detail":"Not Found"}`, "application/json", "JSON"},
		{"malformed", "vllm:num_requests_running{model=\"x\" 3\n", "text/plain", "not in the Prometheus text format"},
		{"bad value", "m abc\n", "", "not in the Prometheus text format"},
		{"protobuf", "\x00\x01", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", "protobuf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body), tc.ctype)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error %v, want one line saying %q", err, tc.want)
			}
		})
	}
}

// TestReadAggregates: counts add up over series (two engines behind one
// endpoint), ratios take the fullest, a percentage is read as one, and
// negative or non-finite values are ignored.
func TestReadAggregates(t *testing.T) {
	sc := trace.Scrape{Source: trace.SourceMetrics, Samples: []trace.Sample{
		{Name: "vllm:num_requests_running", Labels: `engine="0"`, Value: 3},
		{Name: "vllm:num_requests_running", Labels: `engine="1"`, Value: 4},
		{Name: "vllm:kv_cache_usage_perc", Labels: `engine="0"`, Value: 0.5},
		{Name: "vllm:kv_cache_usage_perc", Labels: `engine="1"`, Value: 0.75},
		{Name: "vllm:num_requests_waiting", Value: -1},
		{Name: "vllm:num_preemptions_total", Value: math.NaN()},
		{Name: "sglang:token_usage", Value: 80}, // a percentage
	}}
	st := Read(&sc)
	// running 3 + 4 = 7; kv max(0.5, 0.75, 80/100) = 0.8.
	if st.Value[Running] != 7 || st.Value[KVUsage] != 0.8 || st.Has(Waiting) || st.Has(Preemptions) {
		t.Errorf("state %+v", st.Value)
	}
	// Waiting -1 and preemptions NaN were left out, and counted.
	if st.Dropped[Waiting] != 1 || st.Dropped[Preemptions] != 1 || st.Dropped[Running] != 0 {
		t.Errorf("dropped %v", st.Dropped)
	}
	sc.Error = "HTTP 500"
	if st := Read(&sc); st.Has(Running) {
		t.Error("a failed scrape read as a state")
	}
}

// TestReadDropsImpossibleGauges: 1e308 requests running, two series whose
// sum overflows, +Inf waiting and a cache 500 % full are not readings: left
// out, and counted per meaning.
func TestReadDropsImpossibleGauges(t *testing.T) {
	sc := trace.Scrape{Source: trace.SourceMetrics, Samples: []trace.Sample{
		{Name: "vllm:num_requests_running", Labels: `engine="0"`, Value: 2},
		{Name: "vllm:num_requests_running", Labels: `engine="1"`, Value: 1e308},
		{Name: "vllm:num_requests_waiting", Value: math.Inf(1)},
		{Name: "vllm:kv_cache_usage_perc", Value: 500},
		{Name: "vllm:num_preemptions_total", Labels: `a="1"`, Value: math.MaxFloat64},
		{Name: "vllm:num_preemptions_total", Labels: `a="2"`, Value: math.MaxFloat64},
	}}
	st := Read(&sc)
	if st.Value[Running] != 2 || st.Has(Waiting) || st.Has(KVUsage) || st.Value[Preemptions] != math.MaxFloat64 {
		t.Errorf("state %+v", st.Value)
	}
	if st.Dropped[Running] != 1 || st.Dropped[Waiting] != 1 || st.Dropped[KVUsage] != 1 || st.Dropped[Preemptions] != 1 {
		t.Errorf("dropped %v", st.Dropped)
	}
}

// FuzzParse: no body makes Parse panic, and what it returns is bounded by
// the body (every sample is at least a name and a value on a line).
func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm.metrics", "vllm.openmetrics", "sglang.metrics", "llamacpp.metrics", "tgi.metrics"} {
		f.Add(readFixture(f, name), "text/plain")
	}
	f.Add([]byte("# EOF\n"), "application/openmetrics-text")
	f.Add([]byte("a{le=\"1\"} 1 # {x=\"#\"} 2\n"), "application/openmetrics-text")
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		samples, err := Parse(body, ctype)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		// A histogram or summary line can add one series (its count,
		// sum or +Inf bucket) beyond its own: at most 3 per line.
		if lines := strings.Count(string(body), "\n") + 1; len(samples) > 3*lines {
			t.Fatalf("%d samples from %d lines", len(samples), lines)
		}
		Read(&trace.Scrape{Samples: samples})
	})
}

// TestTTFTHistogram: the vLLM fixture's TTFT buckets (le 0.04: 1, 0.1: 4,
// +Inf: 8) are read, and the median is worked out as histogram_quantile
// does: rank 0.5 × 8 = 4 falls in (0.04, 0.1], which holds counts 1 → 4:
// 0.04 + (4 − 1)/(4 − 1) × 0.06 = 0.1. The 0.75 quantile (rank 6) is in
// the +Inf bucket: no estimate.
func TestTTFTHistogram(t *testing.T) {
	samples, err := Parse(readFixture(t, "vllm.metrics"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	st := Read(&trace.Scrape{Source: trace.SourceMetrics, Samples: samples})
	if len(st.TTFT) != 3 || st.TTFT[0] != (Bucket{0.04, 1}) || st.TTFT[2].Count != 8 {
		t.Fatalf("buckets %v", st.TTFT)
	}
	if v, lo, hi, ok := Quantile(st.TTFT, 0.5); !ok || math.Abs(v-0.1) > 1e-12 || lo != 0.04 || hi != 0.1 {
		t.Errorf("median %v in (%v, %v] ok %v", v, lo, hi, ok)
	}
	if _, _, _, ok := Quantile(st.TTFT, 0.75); ok {
		t.Error("a quantile in the +Inf bucket was estimated")
	}
	if _, _, _, ok := Quantile(nil, 0.5); ok {
		t.Error("an empty histogram gave a median")
	}
}
