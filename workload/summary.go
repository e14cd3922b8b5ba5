package workload

import (
	"math/bits"
	"slices"
)

// PhaseSummary is one phase as `workload inspect` shows it.
type PhaseSummary struct {
	Phase
	InputMin       int      `json:"input_min"`
	InputMax       int      `json:"input_max"`
	InputHistogram []Bucket `json:"input_histogram"`
	OutputMax      int      `json:"output_max"`
	LastOffsetNs   int64    `json:"last_offset_ns"`
}

// Bucket counts requests with lo ≤ input tokens ≤ hi.
type Bucket struct {
	Lo    int `json:"lo"`
	Hi    int `json:"hi"`
	Count int `json:"count"`
}

// Summary is what `workload inspect` prints (as text or JSON): the header,
// totals and, per phase, lengths and a histogram of input lengths.
type Summary struct {
	File            string         `json:"file"`
	Format          string         `json:"format"`
	Major           int            `json:"major"`
	Minor           int            `json:"minor"`
	ToolVersion     string         `json:"tool_version"`
	Digest          string         `json:"digest"`
	Tokenizer       string         `json:"tokenizer"`
	TokenizerDigest string         `json:"tokenizer_digest"`
	Shape           Shape          `json:"shape"`
	Seed            int64          `json:"seed"`
	Params          Params         `json:"params"`
	Schedule        string         `json:"schedule"`
	Requests        int            `json:"requests"`
	InputTokens     int            `json:"input_tokens"`
	Phases          []PhaseSummary `json:"phases"`
}

// Summarize computes the Summary of wl, read from path.
func Summarize(path string, wl *Workload) Summary {
	h := wl.Header
	rep := Summary{
		File: path, Format: h.Format, Major: h.Major, Minor: h.Minor, ToolVersion: h.ToolVersion,
		Digest: Digest(wl), Tokenizer: h.Tokenizer, TokenizerDigest: h.TokenizerDigest,
		Shape: h.Shape, Seed: h.Seed, Params: h.Params, Schedule: h.Schedule.Spec, Requests: len(wl.Requests),
	}
	rep.Phases = make([]PhaseSummary, len(h.Phases))
	for i, p := range h.Phases {
		rep.Phases[i] = PhaseSummary{Phase: p, InputMin: -1}
	}
	for _, r := range wl.Requests {
		s := &rep.Phases[r.Phase]
		rep.InputTokens += r.InputTokens
		if s.InputMin < 0 || r.InputTokens < s.InputMin {
			s.InputMin = r.InputTokens
		}
		s.InputMax = max(s.InputMax, r.InputTokens)
		s.OutputMax = max(s.OutputMax, r.MaxTokens)
		s.LastOffsetNs = max(s.LastOffsetNs, r.Offset)
	}
	// Power-of-two buckets, or one exact bucket when every prompt of the
	// phase has the same length (the usual case).
	for i := range rep.Phases {
		s := &rep.Phases[i]
		if s.InputMin < 0 {
			s.InputMin = 0
		}
		s.InputHistogram = []Bucket{}
	}
	for _, r := range wl.Requests {
		s := &rep.Phases[r.Phase]
		lo, hi := r.InputTokens, r.InputTokens
		if s.InputMin != s.InputMax && r.InputTokens > 0 {
			k := bits.Len(uint(r.InputTokens)) - 1
			lo, hi = 1<<k, 1<<(k+1)-1
		}
		found := false
		for j := range s.InputHistogram {
			if s.InputHistogram[j].Lo == lo {
				s.InputHistogram[j].Count++
				found = true
			}
		}
		if !found {
			s.InputHistogram = append(s.InputHistogram, Bucket{Lo: lo, Hi: hi, Count: 1})
		}
	}
	for i := range rep.Phases {
		slices.SortFunc(rep.Phases[i].InputHistogram, func(a, b Bucket) int { return a.Lo - b.Lo })
	}
	return rep
}
