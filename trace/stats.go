package trace

import "math"

// Stats counts what a trace holds: records by outcome, phase and shard,
// chunks and bytes, and the span from the first send to the last response.
// `trace info` prints it; a Go program gets the same numbers here.
type Stats struct {
	Records, Warmup, OK int
	Failed              map[ErrorClass]int
	PerPhase            map[int]int
	PerShard            map[int]int // merged traces only
	Chunks, TextChunks  int
	ReasoningChunks     int
	ContentChunks       int // with text or reasoning
	TextBytes           int64
	ReasoningBytes      int64
	WireBytes           int64
	// First is the earliest send, Last the latest end, on the run clock.
	First, Last int64
	// Client read delay after the kernel stamps (1.5): the records that
	// have it, the chunks they hold, the delays' sum over those chunks
	// (mean × chunks per record) and the largest; KeptChunkTimes counts
	// the chunks that kept their own user-space time.
	DelayRecords, DelayChunks int
	DelaySum, DelayMax        int64
	KeptChunkTimes            int
	// Chunks read late (1.6, or marked by the reader in a 1.4/1.5 kernel
	// trace): how many, in how many records, and the largest delay.
	ReadLate, ReadLateRecords int
	ReadLateMax               int64
	// Ends counts the successful records with chunks, EndSum and EndMax
	// their end minus their last chunk (summed, saturating; largest).
	Ends           int
	EndSum, EndMax int64
}

// EndMean is the mean of a successful response's end minus its last
// chunk; 0 without any.
func (c *Stats) EndMean() int64 {
	if c.Ends == 0 {
		return 0
	}
	return c.EndSum / int64(c.Ends)
}

// DelayMean is the mean client read delay after the kernel stamps over
// every chunk of the records that have one; 0 without any.
func (c *Stats) DelayMean() int64 {
	if c.DelayChunks == 0 {
		return 0
	}
	return c.DelaySum / int64(c.DelayChunks)
}

// NewStats returns empty Stats ready for Add.
func NewStats() *Stats {
	return &Stats{Failed: map[ErrorClass]int{}, PerPhase: map[int]int{}, PerShard: map[int]int{}}
}

// Add counts one record.
func (c *Stats) Add(r *Record) {
	if c.Records == 0 || r.Sent < c.First {
		c.First = r.Sent
	}
	c.Last = max(c.Last, r.Done)
	c.Records++
	c.PerPhase[r.Phase]++
	if r.Shard != nil {
		c.PerShard[*r.Shard]++
	}
	if r.Warmup {
		c.Warmup++
	}
	if r.OK() {
		c.OK++
	} else {
		c.Failed[r.Error.Class]++
	}
	c.Chunks += len(r.Chunks)
	if r.ReadLate > 0 {
		c.ReadLate += r.ReadLate
		c.ReadLateRecords++
		c.ReadLateMax = max(c.ReadLateMax, r.ReadLateMax)
	}
	if n := len(r.Chunks); n > 0 && r.OK() && r.Done >= r.Chunks[n-1].T {
		d := r.Done - r.Chunks[n-1].T
		c.Ends++
		c.EndSum = satAdd(c.EndSum, d)
		c.EndMax = max(c.EndMax, d)
	}
	if r.UserDelayMax > 0 {
		c.DelayRecords++
		c.DelayChunks += len(r.Chunks)
		// Saturating: each delay is bounded (MaxUserDelay), their sum
		// over a whole trace need not be.
		if add := r.UserDelayMean * int64(len(r.Chunks)); r.UserDelayMean > 0 && (add/r.UserDelayMean != int64(len(r.Chunks)) || c.DelaySum > math.MaxInt64-add) {
			c.DelaySum = math.MaxInt64
		} else {
			c.DelaySum += add
		}
		c.DelayMax = max(c.DelayMax, r.UserDelayMax)
	}
	for i := range r.Chunks {
		ch := &r.Chunks[i]
		if ch.UserT != 0 {
			c.KeptChunkTimes++
		}
		if ch.Content() {
			c.ContentChunks++
		}
		if ch.Text != "" {
			c.TextChunks++
			c.TextBytes += int64(len(ch.Text))
		}
		if ch.Reasoning != "" {
			c.ReasoningChunks++
			c.ReasoningBytes += int64(len(ch.Reasoning))
		}
		c.WireBytes += int64(ch.Bytes)
	}
}

// satAdd adds two non-negative values, saturating at MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
