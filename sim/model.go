package sim

import (
	"sort"
	"time"
)

// burstFigures are the seeds' three numbers for one burst.
type burstFigures struct {
	TTFT      time.Duration // median over streams, from the send
	PerStream float64       // median of (out-1)/(last-first), tok/s
	Aggregate float64       // all output tokens / (last token of the burst - send)
}

// modelBurst runs the engine model on a virtual clock for n identical-size
// requests released together, each with a distinct prompt (no prefix-cache
// hits), and computes the figures the seeds' bench reports. It is the
// reference the profiles were fitted with and that the real-time server is
// checked against. It runs through drive, the driver of the truth figures.
func modelBurst(p Profile, n, promptTokens, maxTokens int) burstFigures {
	queue := make([]arrival, n)
	for i := range queue {
		queue[i] = newArrival(p, promptTokens, maxTokens, i, 0, 0, 0, 0, nil)
	}
	first := make([]time.Duration, n)
	last := make([]time.Duration, n)
	drive(p, queue, n, func(a arrival, now time.Duration) (arrival, bool) {
		first[a.index], last[a.index] = a.first, now
		return arrival{}, false
	})
	return figures(first, last, maxTokens)
}

// figures computes the seeds' statistics from each stream's first and last
// token times (relative to the common send).
func figures(first, last []time.Duration, maxTokens int) burstFigures {
	n := len(first)
	ttft := make([]float64, n)
	rate := make([]float64, n)
	var end time.Duration
	for i := range first {
		ttft[i] = first[i].Seconds()
		if span := (last[i] - first[i]).Seconds(); span > 0 {
			rate[i] = float64(maxTokens-1) / span
		}
		end = max(end, last[i])
	}
	return burstFigures{
		TTFT:      time.Duration(median(ttft) * float64(time.Second)),
		PerStream: median(rate),
		Aggregate: float64(n*maxTokens) / end.Seconds(),
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
