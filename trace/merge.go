package trace

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// MergeOptions say what a merge may do without.
type MergeOptions struct {
	// AllowMissing merges the shards that are there when some of the run's
	// shards have no trace (a shard that never ran or whose pod failed);
	// the merged header lists the missing ones.
	AllowMissing bool
	// AllowClock merges shards whose clocks cannot be trusted to within
	// ClockErrorBound (unsynchronised, no estimate, or estimated worse).
	AllowClock bool
}

// MergeResult says what a merge did.
type MergeResult struct {
	Header  Header // the merged trace's header
	Records int
	// AlignErrorNs is the worst-case error of the shards' common clock
	// (see AlignmentError); 0 when every shard ran on one host, whose one
	// clock they shared. AlignUnknown is true when some clock gave no
	// figure and the shards ran on more than one host.
	AlignErrorNs int64
	AlignUnknown bool
	// Warnings are things the user should know that did not stop the
	// merge (a shard cut short, a shard that started late).
	Warnings []string
}

// mergeInput is one shard trace being merged.
type mergeInput struct {
	name   string
	r      *Reader
	shard  Shard
	start  time.Time // the header's StartWall
	offset int64     // ns added to every time of this shard's records
	rec    *Record
	key    int64
	n      int
	// Scrapes (1.3) are written as they are read, moved onto the merged
	// clock like the records; those read before the writer exists (the
	// first, taken before any record) wait in pending.
	w       *Writer
	pending []Scrape
	err     error
}

// Merge reads the traces of one sharded run (replay --shard I/N) and writes
// one trace whose records are the union of theirs, in order of completion
// time on a common clock, each with its shard's index. Times move onto the
// merged clock, whose zero is the earliest shard's start: each shard's
// records are shifted by the difference of its wall-clock start from that
// one. It streams: memory holds one record per shard, whatever the files'
// sizes.
//
// Before writing anything it checks that the files belong together: each is
// a shard trace, all of one workload (same digest), one shard count and
// distinct indices; a missing index is an error unless opt.AllowMissing.
func Merge(out io.Writer, paths []string, opt MergeOptions) (*MergeResult, error) {
	if len(paths) == 0 {
		return nil, errors.New("trace merge: no shard traces given")
	}
	ins := make([]*mergeInput, 0, len(paths))
	defer func() {
		for _, in := range ins {
			in.r.Close()
		}
	}()
	for _, p := range paths {
		r, err := Open(p)
		if err != nil {
			return nil, err
		}
		r.IncludeScrapes()
		in := &mergeInput{name: p, r: r}
		ins = append(ins, in)
		h := r.Header()
		if h.Shard == nil {
			if len(h.Shards) > 0 {
				return nil, fmt.Errorf("%s is already a merged trace: merge the shard traces it came from", p)
			}
			return nil, fmt.Errorf("%s is not the trace of a shard (its header has no shard): merge only traces of a sharded replay", p)
		}
		in.shard = *h.Shard
		if c := in.shard.Count; c < 1 || c > maxMergeShards || in.shard.Index < 0 || in.shard.Index >= c {
			return nil, fmt.Errorf("%s says it is shard %d of %d, which no sharded run has (1 to %d shards): the header is damaged", p, in.shard.Index, c, maxMergeShards)
		}
		in.shard.StartWall = h.StartWall
		in.shard.File = filepath.Base(p)
		if in.shard.Host == "" {
			in.shard.Host = h.Host.Hostname
		}
	}
	first := ins[0]
	fh := first.r.Header()
	byIndex := map[int]*mergeInput{}
	for _, in := range ins {
		h := in.r.Header()
		switch {
		case h.WorkloadDigest != fh.WorkloadDigest:
			return nil, fmt.Errorf("%s replayed workload %s but %s replayed %s: merge only shards of one run", in.name, short(h.WorkloadDigest), first.name, short(fh.WorkloadDigest))
		case in.shard.Count != first.shard.Count:
			return nil, fmt.Errorf("%s is shard %d/%d but %s is shard %d/%d: the shard counts differ, so they are not one run", in.name, in.shard.Index, in.shard.Count, first.name, first.shard.Index, first.shard.Count)
		case len(h.Phases) != len(fh.Phases):
			return nil, fmt.Errorf("%s has %d phases but %s has %d: merge only shards of one run", in.name, len(h.Phases), first.name, len(fh.Phases))
		}
		if o, dup := byIndex[in.shard.Index]; dup {
			return nil, fmt.Errorf("%s and %s are both shard %d/%d: give each shard's trace once", o.name, in.name, in.shard.Index, in.shard.Count)
		}
		byIndex[in.shard.Index] = in
		// One run sends one model under one label over one API: shards
		// that differ are of different runs, which would merge under the
		// first one's label.
		for _, f := range [][3]string{{"model", h.Model, fh.Model}, {"label", h.Label, fh.Label}, {"API", h.API, fh.API}} {
			if f[1] != f[2] {
				return nil, fmt.Errorf("%s ran %s %q but %s ran %s %q: they are not one run; merge only the shards of one run", in.name, f[0], f[1], first.name, f[0], f[2])
			}
		}
	}
	if err := checkStarts(ins); err != nil {
		return nil, err
	}
	var missing []int
	for i := 0; i < first.shard.Count; i++ {
		if byIndex[i] == nil {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 && !opt.AllowMissing {
		return nil, fielderr.New("trace: MergeOptions", "AllowMissing",
			fmt.Sprintf("is off and shard%s %s of %d %s missing", plural(len(missing), "", "s"), joinInts(missing), first.shard.Count, plural(len(missing), "is", "are")),
			fmt.Sprintf("give %s trace, or allow merging the %d that are here", plural(len(missing), "its", "their"), len(ins)))
	}
	slices.SortFunc(ins, func(a, b *mergeInput) int { return a.shard.Index - b.shard.Index })

	res := &MergeResult{}
	oneHost := true
	for _, in := range ins {
		if in.shard.Host == "" || in.shard.Host != ins[0].shard.Host {
			oneHost = false
		}
	}
	if !oneHost {
		shards := make([]Shard, len(ins))
		for i, in := range ins {
			shards[i] = in.shard
		}
		res.AlignErrorNs, res.AlignUnknown = AlignmentError(shards)
		for _, in := range ins {
			if !in.shard.Clock.Trusted() && !opt.AllowClock {
				return nil, fielderr.New("trace: MergeOptions", "AllowClock",
					fmt.Sprintf("is off and %s: shard %d's clock %s, so its times cannot be put beside the other shards' to within %v", in.name, in.shard.Index, clockProblem(in.shard.Clock), time.Duration(ClockErrorBound)),
					"synchronise the clients' clocks (NTP), or allow merging anyway")
			}
		}
	}

	// The merged clock's zero is the earliest shard start. checkStarts
	// has bounded the starts' spread, so the offsets are small.
	origin := ins[0].start
	for _, in := range ins {
		if in.start.Before(origin) {
			origin = in.start
		}
	}
	for _, in := range ins {
		in.offset = int64(in.start.Sub(origin))
		in.shard.OffsetNs = in.offset
		if in.shard.StartLateNs > int64(time.Second) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("shard %d started %v after the common start %s: its first phase overlapped the others' less than planned",
				in.shard.Index, time.Duration(in.shard.StartLateNs).Round(time.Millisecond), in.shard.StartAt))
		}
	}

	h := fh
	h.Shard = nil
	h.StartWall = origin.UTC().Format(time.RFC3339Nano)
	h.ShardsMissing = missing
	h.Phases = slices.Clone(fh.Phases)
	for i := range h.Phases {
		h.Phases[i].Concurrency, h.Phases[i].Requests = 0, 0
	}
	for _, in := range ins {
		for i, p := range in.r.Header().Phases {
			if p.Index != h.Phases[i].Index || p.Name != h.Phases[i].Name {
				return nil, fmt.Errorf("%s: phase %d is %q but %s has %q there: merge only shards of one run", in.name, i, p.Name, first.name, h.Phases[i].Name)
			}
			h.Phases[i].Concurrency += p.Concurrency
			h.Phases[i].Requests += p.Requests
		}
	}
	opts := make(map[string]string, len(fh.Options)+1)
	for k, v := range fh.Options {
		opts[k] = v
	}
	opts["merged_shards"] = strconv.Itoa(len(ins))
	h.Options = opts

	// Prime every input, then merge by completion time.
	pq := make(mergeHeap, 0, len(ins))
	for _, in := range ins {
		if in.next() {
			pq = append(pq, in)
		}
	}
	heap.Init(&pq)
	// The merged header lists each shard's record count, known only at the
	// end; the header is written first, so the shards' entries say what
	// was merged, and Records/Truncated are filled in the result.
	for _, in := range ins {
		h.Shards = append(h.Shards, in.shard)
	}
	// SpeedFastest: a merge is a batch job whose output is read again, not
	// a live run; the fastest level keeps it near the readers' pace.
	w, err := NewWriter(out, h, WithFlushInterval(0), WithLevel(zstd.SpeedFastest), WithBackgroundCompression())
	if err != nil {
		return nil, err
	}
	for _, in := range ins {
		in.w = w
		for i := range in.pending {
			if err := w.WriteScrape(&in.pending[i]); err != nil {
				return nil, err
			}
		}
		in.pending = nil
	}
	var seen requestSet
	for len(pq) > 0 {
		in := pq[0]
		idx := in.shard.Index
		if err := seen.add(in, byIndex); err != nil {
			return nil, err
		}
		in.rec.Shard = &idx
		if err := w.Write(in.rec); err != nil {
			return nil, err
		}
		res.Records++
		in.n++
		if in.next() {
			heap.Fix(&pq, 0)
		} else {
			heap.Pop(&pq)
		}
	}
	for i, in := range ins {
		if err := in.r.Err(); err != nil {
			return nil, err
		}
		if in.err != nil {
			return nil, in.err
		}
		if n, first := in.r.Skipped(); n > 0 {
			// A repeated record is skipped by the reader (a duplicated
			// frame, or an edit): one run's shard holds each request once.
			return nil, fmt.Errorf("%s is damaged: %d of its entries could not be merged (the first: %v); merge only the shards of one run, each as replay wrote it", in.name, n, first)
		}
		h.Shards[i].Records = in.n
		if in.r.Truncated() {
			h.Shards[i].Truncated = true
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s ends mid-write (shard %d was killed): its %d complete records are merged", in.name, in.shard.Index, in.n))
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	res.Header = h
	return res, nil
}

// next reads the input's next record and moves its times onto the merged
// clock. Times of 0 mean "did not happen" (except Scheduled) and stay 0.
func (in *mergeInput) next() bool {
	d := in.offset
	var r *Record
	for in.r.Scan() {
		s := in.r.Scrape()
		if s == nil {
			r = in.r.Record()
			break
		}
		c := *s
		c.T += d
		if in.w == nil {
			c.Samples = append([]Sample(nil), s.Samples...)
			in.pending = append(in.pending, c)
			continue
		}
		if err := in.w.WriteScrape(&c); err != nil {
			in.err = err
			break
		}
	}
	if r == nil {
		in.rec = nil
		return false
	}
	r.Shift(d)
	in.rec = r
	in.key = r.Done
	if in.key == 0 {
		in.key = max(r.Sent, r.Scheduled)
	}
	return true
}

type mergeHeap []*mergeInput

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].shard.Index < h[j].shard.Index
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeInput)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// startTolerance is how far a shard's start may lie from the others' (or
// from its common start, less the lateness it recorded) and still be
// taken for the same run: a second, the lateness a run reports as late
// (replay's lateStart, and the merge's warning). Shards started apart by
// more, with nothing in their headers to explain it, were different runs;
// merged, their phase windows would span the gap, and aggregate tok/s
// with them.
const startTolerance = time.Second

// earliestStart and latestStart bound a start time a run can have: a
// start_wall outside them is a damaged header (year 1 overflowed the
// offsets in nanoseconds, which reach only to 1677 and 2262).
var (
	earliestStart = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	latestStart   = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// checkStarts refuses shards whose starts say they are not one run: a
// start time no run can have, shards given different common starts (or
// one and not another), a shard whose start lies away from its common
// start by more than its recorded lateness explains, and shards without a
// common start that started apart. It sets every input's start.
func checkStarts(ins []*mergeInput) error {
	for _, in := range ins {
		sw := in.r.Header().StartWall
		t, err := time.Parse(time.RFC3339Nano, sw)
		if err != nil {
			return fmt.Errorf("%s: its start time %q is not RFC 3339: the header is damaged", in.name, sw)
		}
		if t.Before(earliestStart) || !t.Before(latestStart) {
			return fmt.Errorf("%s: its start time %s is not one a run can have: the header is damaged", in.name, sw)
		}
		in.start = t
	}
	first := ins[0]
	var at time.Time
	if first.shard.StartAt != "" {
		t, err := time.Parse(time.RFC3339Nano, first.shard.StartAt)
		if err != nil {
			return fmt.Errorf("%s: its common start %q is not RFC 3339: the header is damaged", first.name, first.shard.StartAt)
		}
		at = t
	}
	for _, in := range ins[1:] {
		switch a, b := in.shard.StartAt, first.shard.StartAt; {
		case a == "" && b == "":
		case a == "" || b == "":
			return fmt.Errorf("%s had %s but %s had %s: they are not one run; merge only the shards of one run",
				in.name, commonStart(a), first.name, commonStart(b))
		default:
			if t, err := time.Parse(time.RFC3339Nano, a); err != nil || !t.Equal(at) {
				return fmt.Errorf("%s had %s but %s had %s: they are not one run; merge only the shards of one run",
					in.name, commonStart(a), first.name, commonStart(b))
			}
		}
	}
	if !at.IsZero() {
		// Each shard's run clock started at its common start plus the
		// lateness it recorded, on its own wall clock.
		for _, in := range ins {
			late := time.Duration(in.shard.StartLateNs)
			if off := in.start.Sub(at) - late; off > startTolerance || off < -startTolerance {
				return fmt.Errorf("%s started %v %s its common start %s yet records starting %v late: its start is not this run's; merge only the shards of one run",
					in.name, absDuration(in.start.Sub(at)), beforeAfter(in.start.Sub(at)), first.shard.StartAt, late)
			}
		}
		return nil
	}
	earliest := first
	for _, in := range ins {
		if in.start.Before(earliest.start) {
			earliest = in
		}
	}
	for _, in := range ins {
		if d := in.start.Sub(earliest.start); d > startTolerance {
			return fmt.Errorf("%s started %v after %s and neither had a common start: they are not one run, or were started apart; run the shards with --start-at (or --start-in) so they start together",
				in.name, d.Round(time.Millisecond), earliest.name)
		}
	}
	return nil
}

func commonStart(at string) string {
	if at == "" {
		return "no common start"
	}
	return "the common start " + at
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func beforeAfter(d time.Duration) string {
	if d < 0 {
		return "before"
	}
	return "after"
}

// requestSet is the workload requests the merged shards sent, by index:
// each must come from one shard, once. A shard trace relabelled to
// another index, or one holding a request twice, would otherwise merge
// into duplicate ids. Warm-up records repeat requests by design and are
// not counted. It keeps a byte pair per index up to the largest seen, not
// a record: 20 MB at the workload format's 10 million requests.
type requestSet struct {
	by []uint16 // shard index + 1 of the record with that request index; 0: none yet
}

// maxMergeShards is the most shards a run has (workload.MaxShards).
const maxMergeShards = 10_000

// maxMergeIndex bounds a record's request index: the workload format
// holds at most ten million requests.
const maxMergeIndex = 1 << 24

func (s *requestSet) add(in *mergeInput, byIndex map[int]*mergeInput) error {
	r := in.rec
	if r.Warmup {
		return nil
	}
	if r.Index < 0 || r.Index >= maxMergeIndex {
		return fmt.Errorf("%s: record %q has request index %d, which no workload has: the trace is damaged", in.name, r.ID, r.Index)
	}
	if r.Index >= len(s.by) {
		s.by = append(s.by, make([]uint16, r.Index+1-len(s.by)+len(s.by)/2)...)
	}
	switch prev := int(s.by[r.Index]) - 1; {
	case prev < 0:
		s.by[r.Index] = uint16(in.shard.Index + 1)
		return nil
	case prev == in.shard.Index:
		return fmt.Errorf("%s holds request %d twice: the trace was edited or is damaged; merge only the shards of one run, each as replay wrote it", in.name, r.Index)
	default:
		return fmt.Errorf("%s (shard %d) holds request %d, which is also in %s (shard %d): a shard relabelled from another index, or shards of different runs, are not one run; merge only the shards of one run",
			in.name, in.shard.Index, r.Index, byIndex[prev].name, prev)
	}
}

func clockProblem(c Clock) string {
	switch {
	case c.Source == "":
		return "gave no error estimate (the OS reports none)"
	case !c.Synced:
		return "was not synchronised (NTP reports it unsynchronised)"
	default:
		return fmt.Sprintf("had an estimated error of %v", time.Duration(c.EstErrorNs))
	}
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19] + "…"
	}
	return d
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
