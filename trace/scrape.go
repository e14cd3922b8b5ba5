package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Scrape is one reading of the server's own account of itself taken during
// a run (1.3): its Prometheus /metrics, or a local process's memory and CPU
// (--watch-pid). Scrapes are their own entry kind, between the records in
// the order they were taken; a 1.0–1.2 reader skips them.
type Scrape struct {
	// T is when the scrape was sent, Duration how long it took to the
	// last byte, both in nanoseconds on the run clock of the records.
	T        int64 `json:"t_ns"`
	Duration int64 `json:"duration_ns"`
	// Source is the kind of reading: SourceMetrics or SourceProcess.
	Source string `json:"source"`
	// Target is what was read: the /metrics URL without credentials or
	// query, or "pid N".
	Target string `json:"target"`
	// Error is why the scrape failed (timeout, HTTP status, not metrics,
	// over the size limit …); "" when it succeeded. A failed scrape may
	// hold no samples.
	Error string `json:"error,omitempty"`
	// Dropped counts samples not kept because the scrape had more than
	// MaxScrapeSamples.
	Dropped int `json:"dropped,omitempty"`
	// Samples are every sample the scrape returned, as the server named
	// them: histograms and summaries flattened to their _bucket, _sum and
	// _count series, as in the Prometheus text format.
	Samples []Sample `json:"samples,omitempty"`
}

// Sample is one time series' value in a scrape.
type Sample struct {
	Name string `json:"name"`
	// Labels are the series' labels in the text format's form without the
	// braces, sorted by name: `code="200",model="x"`; "" for none.
	Labels string  `json:"labels,omitempty"`
	Value  float64 `json:"value"`
}

// MarshalJSON writes a sample as JSON, which has no NaN or infinities: those
// values are written as the strings "NaN", "+Inf" and "-Inf", as the
// Prometheus text format writes them.
func (s Sample) MarshalJSON() ([]byte, error) {
	name, _ := json.Marshal(s.Name) // a string always marshals
	b := append([]byte(`{"name":`), name...)
	if s.Labels != "" {
		l, _ := json.Marshal(s.Labels)
		b = append(append(b, `,"labels":`...), l...)
	}
	b = append(b, `,"value":`...)
	switch {
	case math.IsNaN(s.Value):
		b = append(b, `"NaN"`...)
	case math.IsInf(s.Value, 1):
		b = append(b, `"+Inf"`...)
	case math.IsInf(s.Value, -1):
		b = append(b, `"-Inf"`...)
	default:
		b = strconv.AppendFloat(b, s.Value, 'g', -1, 64)
	}
	return append(b, '}'), nil
}

// Scrape sources.
const (
	SourceMetrics = "metrics" // a Prometheus /metrics endpoint
	SourceProcess = "process" // a local process (/proc)
	// SourceClock is the client's own clock (1.4): one sample,
	// ClockOffsetSample, the wall clock minus the run clock in ns, less
	// the same at the run's start (StartWall), read at the start and the
	// end of the run. A non-zero value means the wall clock was slewed or
	// stepped during the run (analyze warns of a step).
	SourceClock = "clock"
)

// ClockOffsetSample names the clock scrape's sample.
const ClockOffsetSample = "wall_offset_change_ns"

// The timestamp sources of Header.Timestamps.
const (
	TimestampsKernel = "kernel"
	TimestampsUser   = "user"
)

// Limits of one scrape entry, far above any engine's /metrics (vLLM's is a
// few hundred series; with many LoRA adapters or labels a few thousand):
// what a hostile endpoint can make a trace hold.
const (
	MaxScrapeSamples = 100_000
	// maxSampleText bounds a name or label string; longer ones are cut.
	maxSampleText = 4 << 10
	maxScrapeText = 4 << 10 // Source, Target and Error
)

// appendScrapeV1 appends s's body: varints and strings, then the samples
// column by column (names, labels, values) so that zstd finds each scrape's
// names where the previous scrape had them.
func appendScrapeV1(b []byte, s *Scrape) []byte {
	b = binary.AppendVarint(b, s.T)
	b = binary.AppendVarint(b, s.Duration)
	b = appendString(b, clip(s.Source, maxScrapeText))
	b = appendString(b, clip(s.Target, maxScrapeText))
	b = appendString(b, clip(s.Error, maxScrapeText))
	b = binary.AppendUvarint(b, uint64(s.Dropped))
	b = binary.AppendUvarint(b, uint64(len(s.Samples)))
	for i := range s.Samples {
		b = appendString(b, clip(s.Samples[i].Name, maxSampleText))
	}
	for i := range s.Samples {
		b = appendString(b, clip(s.Samples[i].Labels, maxSampleText))
	}
	for i := range s.Samples {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.Samples[i].Value))
	}
	return b
}

// clip cuts s to at most n bytes (a limit no real name reaches).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// decodeScrapeV1 parses a scrape body into s, reusing its sample slice.
func decodeScrapeV1(body string, s *Scrape) error {
	c := cursor{s: body}
	samples := s.Samples[:0]
	*s = Scrape{}
	s.T = c.varint()
	s.Duration = c.varint()
	s.Source = c.str()
	s.Target = c.str()
	s.Error = c.str()
	dropped := c.uvarint()
	// Each sample takes at least 10 bytes (two lengths, a value): a
	// count the body cannot hold is corrupt, and bounding it here bounds
	// the allocation by the body size.
	n := c.uvarint()
	if c.err != nil {
		return c.err
	}
	if dropped > math.MaxInt32 {
		return fmt.Errorf("scrape: %d dropped samples is not a count", dropped)
	}
	if n > uint64(len(c.s)-c.i)/10 {
		return fmt.Errorf("scrape: %d samples cannot fit in the %d bytes left", n, len(c.s)-c.i)
	}
	s.Dropped = int(dropped)
	if cap(samples) < int(n) {
		samples = make([]Sample, n)
	}
	samples = samples[:n]
	for i := range samples {
		samples[i].Name = c.str()
	}
	for i := range samples {
		samples[i].Labels = c.str()
	}
	if c.err != nil {
		return c.err
	}
	if len(c.s)-c.i < 8*int(n) {
		return errors.New("scrape: the values end early")
	}
	for i := range samples {
		samples[i].Value = math.Float64frombits(le64(c.s[c.i : c.i+8]))
		c.i += 8
	}
	// Bytes after the values belong to a later minor version: ignored.
	if n > 0 {
		s.Samples = samples
	}
	return nil
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
