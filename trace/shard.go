package trace

// Shard describes one shard of a run sent from several client machines
// (replay --shard I/N). In a shard's own trace it says which part this is
// and how well its clock could be trusted; in a merged trace it is one entry
// of Header.Shards with where that shard's times were moved to.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the common start the shards were given (RFC 3339, UTC),
	// "" when each started on its own.
	StartAt string `json:"start_at,omitempty"`
	// StartLateNs is how long after StartAt this shard's run clock started
	// (a pod scheduled late, say); 0 when it started on time.
	StartLateNs int64 `json:"start_late_ns,omitempty"`
	// Host is the client machine's host name.
	Host string `json:"host,omitempty"`
	// Clock is the operating system's own estimate of its wall clock's
	// error when the shard started.
	Clock Clock `json:"clock"`

	// Set by trace merge only:
	// StartWall is the shard trace's start; OffsetNs was added to every
	// time of its records to put them on the merged trace's clock, whose
	// zero is the earliest shard's start.
	StartWall string `json:"start_wall,omitempty"`
	OffsetNs  int64  `json:"offset_ns,omitempty"`
	// Records is how many records the shard contributed; Truncated says
	// its file ended mid-write (the shard was killed).
	Records   int  `json:"records,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
	// File is the base name of the shard's trace file.
	File string `json:"file,omitempty"`
}

// Clock is a wall clock's error estimate as the OS keeps it (Linux
// adjtimex: the NTP discipline's estimated and maximum error).
type Clock struct {
	// Source is where the figures come from ("adjtimex"), or "" when the OS
	// gives none; the error fields are then unknown, not zero.
	Source string `json:"source,omitempty"`
	// Synced is false when the OS says the clock is not synchronised
	// (STA_UNSYNC): its error is then unbounded whatever the fields say.
	Synced     bool  `json:"synced"`
	EstErrorNs int64 `json:"est_error_ns,omitempty"`
	MaxErrorNs int64 `json:"max_error_ns,omitempty"`
}

// ClockErrorBound is the clock error above which a shard's clock is too
// poor for the metrics that compare times across shards. Per-request
// metrics (TTFT, ITL, TPOT, E2E) never do: each request's times come from
// one shard's monotonic clock. What does is the window of a phase that
// spans shards (aggregate tok/s = tokens / window) and the claim that a
// burst was released at one instant. Two shards off by e in opposite
// directions widen or shrink a window by up to 2e; for a 1 s burst window
// (800-token prompts, 256 tokens out at ~300 tok/s per stream is ~1 s),
// 2e ≤ 10 ms keeps aggregate tok/s within 1%, so e ≤ 5 ms.
const ClockErrorBound = 5_000_000 // ns

// Trusted reports whether the clock is known to be within ClockErrorBound.
func (c Clock) Trusted() bool {
	return c.Source != "" && c.Synced && c.EstErrorNs <= ClockErrorBound
}

// AlignmentError is the worst-case error of putting shards on one clock:
// the two largest clock errors added (two shards off in opposite
// directions), using each shard's maximum error where the OS gives one,
// else its estimated error. Unknown is returned true when any shard's clock
// gave no figure.
func AlignmentError(shards []Shard) (ns int64, unknown bool) {
	var a, b int64 // the two largest
	for _, s := range shards {
		if s.Clock.Source == "" || !s.Clock.Synced {
			unknown = true
			continue
		}
		e := s.Clock.MaxErrorNs
		if e == 0 {
			e = s.Clock.EstErrorNs
		}
		switch {
		case e > a:
			a, b = e, a
		case e > b:
			b = e
		}
	}
	if len(shards) < 2 {
		return 0, unknown
	}
	return a + b, unknown
}
