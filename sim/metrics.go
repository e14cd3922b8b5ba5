package sim

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is the simulator's /metrics, on a private registry so several
// servers in one test process never collide on the global one. Names follow
// vLLM's where one exists, under an llmreplay_sim_ prefix so nobody mistakes
// them for a real engine's.
type metrics struct {
	reg          *prometheus.Registry
	running      prometheus.Gauge
	waiting      prometheus.Gauge
	kvUsage      prometheus.Gauge
	generated    prometheus.Counter
	prompt       prometheus.Counter
	cacheQueries prometheus.Counter
	cacheHits    prometheus.Counter
	preemptions  prometheus.Counter
	ttft         prometheus.Histogram
	requests     *prometheus.CounterVec
	// sessionRequests and sessionsSeen count the requests that carried a
	// session id (SessionHeader) and the distinct ids.
	sessionRequests prometheus.Counter
	sessionsSeen    prometheus.Gauge
}

// TimeScaleMetric is the gauge whose value is the time scale the
// simulator runs its profile at (1: the profile's own pace). A client that
// scrapes /metrics during a run (replay does by default) keeps it in the
// trace, so analyze can say that a separately started simulator's numbers
// are scaled, which the trace's header cannot know.
const TimeScaleMetric = "llmreplay_sim_time_scale"

func newMetrics(profile string, timeScale float64) *metrics {
	labels := prometheus.Labels{"profile": profile}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "llmreplay_sim_" + name, Help: help, ConstLabels: labels})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "llmreplay_sim_" + name, Help: help, ConstLabels: labels})
	}
	m := &metrics{
		reg:          prometheus.NewRegistry(),
		running:      gauge("num_requests_running", "Requests holding a slot (prefilling or decoding)."),
		waiting:      gauge("num_requests_waiting", "Requests queued for a slot."),
		kvUsage:      gauge("kv_cache_usage_perc", "Simulated KV-cache blocks in use as a fraction of the profile's KV cache (1 = full)."),
		generated:    counter("generation_tokens_total", "Output tokens generated."),
		prompt:       counter("prompt_tokens_total", "Prompt tokens received."),
		cacheQueries: counter("prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache."),
		cacheHits:    counter("prefix_cache_hits_total", "Prompt tokens found in the prefix cache (not prefilled again)."),
		// The model never evicts a running request (a request waits for a
		// slot instead), so this counter stays at 0: exported so a scrape
		// of the simulator has every meaning a real engine's has.
		preemptions: counter("num_preemptions_total", "Running requests evicted to make room (the simulator's model never preempts: always 0)."),
		// vLLM's buckets, so a scrape of the simulator reads like one of
		// vLLM: from the request reaching the engine to the step that
		// produced its first token (the model's TTFT, without HTTP).
		ttft: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "llmreplay_sim_time_to_first_token_seconds",
			Help:        "Time from the request reaching the engine to its first token, in seconds.",
			ConstLabels: labels,
			Buckets:     []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmreplay_sim_requests_total",
			Help: "Requests answered, by HTTP status code.", ConstLabels: labels}, []string{"code"}),
		sessionRequests: counter("session_requests_total", "Requests that carried a session id in the "+SessionHeader+" header."),
		sessionsSeen:    gauge("sessions_seen", "Distinct session ids seen in the "+SessionHeader+" header."),
	}
	scale := prometheus.NewGauge(prometheus.GaugeOpts{Name: TimeScaleMetric,
		Help: "The factor every duration of the profile is run at (1: the profile's own pace; 0.1: ten times faster).", ConstLabels: labels})
	scale.Set(timeScale)
	m.reg.MustRegister(scale)
	m.reg.MustRegister(m.running, m.waiting, m.kvUsage, m.generated, m.prompt, m.cacheQueries, m.cacheHits, m.preemptions, m.ttft, m.requests, m.sessionRequests, m.sessionsSeen)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
