package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
)

// ServerState collects, while the traces are read, what the server said
// about itself over time in its /metrics (trace format 1.3 scrapes): the
// requests it was running and queueing and its KV-cache usage, in common
// terms across engines (servermetrics), per label. The report draws them
// on the run's clock, so a TTFT that climbs can be set beside the queue
// that made it climb. Bounded: maxStatePoints per label and meaning.
type ServerState struct {
	labels []string
	points map[string]*statePoints
}

type statePoints struct {
	t                    []float64 // seconds on the run clock
	running, waiting, kv []float64
	failed               int
	// droppedQueue and droppedKV count readings left out as impossible
	// (servermetrics.State.Dropped): 1e308 requests running, a NaN cache.
	droppedQueue, droppedKV int
}

const maxStatePoints = 2000

// Add takes one scrape (analyze.Options.Scrapes).
func (s *ServerState) Add(label string, sc *trace.Scrape) {
	if s.points == nil {
		s.points = map[string]*statePoints{}
	}
	p := s.points[label]
	if p == nil {
		p = &statePoints{}
		s.points[label] = p
		s.labels = append(s.labels, label)
	}
	if sc.Error != "" {
		p.failed++
		return
	}
	if sc.Source != trace.SourceMetrics || len(p.t) >= maxStatePoints {
		return
	}
	st := servermetrics.Read(sc)
	p.droppedQueue += st.Dropped[servermetrics.Running] + st.Dropped[servermetrics.Waiting]
	p.droppedKV += st.Dropped[servermetrics.KVUsage]
	if !st.Has(servermetrics.Running) && !st.Has(servermetrics.Waiting) && !st.Has(servermetrics.KVUsage) {
		return // an engine whose names are not known: nothing to draw
	}
	p.t = append(p.t, float64(sc.T)/1e9)
	p.running = append(p.running, st.Value[servermetrics.Running])
	p.waiting = append(p.waiting, st.Value[servermetrics.Waiting])
	p.kv = append(p.kv, 100*st.Value[servermetrics.KVUsage])
}

// charts are the server-state charts: running and waiting requests, and
// KV-cache usage, against the run's time; none when no scrape had them.
func (s *ServerState) charts() []Chart {
	if s == nil {
		return nil
	}
	var queue, kv []Series
	var droppedQueue, droppedKV int
	for _, l := range s.labels {
		p := s.points[l]
		droppedQueue, droppedKV = droppedQueue+p.droppedQueue, droppedKV+p.droppedKV
		if len(p.t) == 0 {
			continue
		}
		series := func(name string, v []float64) (Series, bool) {
			out := Series{Name: name}
			for i, y := range v {
				if !math.IsNaN(y) {
					out.Points = append(out.Points, Point{X: p.t[i], Y: y, Lo: math.NaN(), Hi: math.NaN()})
				}
			}
			return out, len(out.Points) > 0
		}
		if r, ok := series(l+" running", p.running); ok {
			queue = append(queue, r)
		}
		if w, ok := series(l+" waiting", p.waiting); ok {
			queue = append(queue, w)
		}
		if k, ok := series(l, p.kv); ok {
			kv = append(kv, k)
		}
	}
	var out []Chart
	if len(queue) > 0 {
		out = append(out, Chart{ID: "server-queue", Title: "Server: requests running and waiting (its /metrics)", XLabel: "seconds since the run started",
			YLabel: "requests", Unit: "requests", Series: queue, Note: "What the server said in each scrape of its /metrics; waiting above 0 means requests queued for a slot." +
				droppedNote(droppedQueue, fmt.Sprintf("not finite, negative or over %.0f requests", servermetrics.MaxRequestsGauge))})
	}
	if len(kv) > 0 {
		out = append(out, Chart{ID: "server-kv", Title: "Server: KV-cache usage (its /metrics)", XLabel: "seconds since the run started",
			YLabel: "% of the KV cache", Unit: "% of the KV cache", Series: kv, Note: strings.TrimSpace(droppedNote(droppedKV, "not finite, negative or over 100 %"))})
	}
	return out
}

// droppedNote says how many readings a chart leaves out, and why: a
// server that says 1e308 requests are running is not drawn, but not
// hidden either.
func droppedNote(n int, why string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %d reading%s dropped as impossible (%s).", n, map[bool]string{true: "", false: "s"}[n == 1], why)
}
