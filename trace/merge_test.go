package trace

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/cputime"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

// shardTrace writes a shard trace with the given start and records
// (index, phase, sent, done, one chunk at done-1ms) and returns its path.
func shardTrace(t *testing.T, dir string, idx, count int, host, start, digest string, clock Clock, recs [][4]int64, scrapes ...Scrape) string {
	t.Helper()
	h := Header{
		WorkloadDigest: digest, Tokenizer: "o200k_base", Shape: "chat", API: "openai-chat", Model: "m", Label: "L",
		Phases:    []Phase{{Index: 0, Name: "burst-c4", Kind: "burst", Concurrency: 2, Requests: 2}, {Index: 1, Name: "burst-c8", Kind: "burst", Concurrency: 4, Requests: 4}},
		StartWall: start,
		Host:      Host{Hostname: host},
		Shard:     &Shard{Index: idx, Count: count, Host: host, Clock: clock},
	}
	name := filepath.Join(dir, "shard"+string(rune('0'+idx))+".trace.zst")
	w, err := Create(name, h, WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range scrapes {
		if i == 1 {
			break // the first before the records, the rest after
		}
		if err := w.WriteScrape(&scrapes[i]); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for i := 1; i < len(scrapes); i++ {
			if err := w.WriteScrape(&scrapes[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	for _, r := range recs {
		rec := Record{ID: "r" + string(rune('0'+r[0])), Index: int(r[0]), Phase: int(r[1]), Scheduled: 0, Sent: r[2], Headers: r[2] + 1, Done: r[3], Status: 200,
			Chunks: []Chunk{{T: r[3] - 1_000_000, Bytes: 10, Text: " 1"}}}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// TestMergeCarriesScrapes: each shard's scrapes (1.3), the one before its
// records and the ones after, are in the merged trace, moved onto the
// merged clock like the records (shard 1 started 2.5 ms later: +2.5 ms).
func TestMergeCarriesScrapes(t *testing.T) {
	dir := t.TempDir()
	sc := func(ms int64, v float64) Scrape {
		return Scrape{T: ms * 1_000_000, Source: SourceMetrics, Target: "http://s/metrics", Samples: []Sample{{Name: "vllm:num_requests_running", Value: v}}}
	}
	a := shardTrace(t, dir, 0, 2, "hostA", "2026-12-03T10:00:00.000000000Z", "sha256:aa", goodClock,
		[][4]int64{{0, 0, 1000, 10_000_000}, {2, 0, 1000, 30_000_000}}, sc(0, 0), sc(35, 1))
	b := shardTrace(t, dir, 1, 2, "hostB", "2026-12-03T10:00:00.002500000Z", "sha256:aa", goodClock,
		[][4]int64{{1, 0, 1000, 5_000_000}, {3, 0, 1000, 40_000_000}}, sc(0, 2), sc(20, 3), sc(45, 4))
	var buf bytes.Buffer
	if _, err := Merge(&buf, []string{a, b}, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r.IncludeScrapes()
	got := map[float64]int64{}
	recs := 0
	for r.Scan() {
		if s := r.Scrape(); s != nil {
			got[s.Samples[0].Value] = s.T
			continue
		}
		recs++
	}
	want := map[float64]int64{0: 0, 1: 35_000_000, 2: 2_500_000, 3: 22_500_000, 4: 47_500_000}
	if r.Err() != nil || recs != 4 || len(got) != len(want) {
		t.Fatalf("err %v, %d records, scrapes %v", r.Err(), recs, got)
	}
	for v, ts := range want {
		if got[v] != ts {
			t.Errorf("scrape %v at %d, want %d", v, got[v], ts)
		}
	}
}

var goodClock = Clock{Source: "adjtimex", Synced: true, EstErrorNs: 200_000, MaxErrorNs: 1_500_000}

// alignedShards writes two shards of one run: shard 1 started 2.5 ms after
// shard 0, each finished two requests.
func alignedShards(t *testing.T) (a, b string) {
	dir := t.TempDir()
	a = shardTrace(t, dir, 0, 2, "hostA", "2026-12-03T10:00:00.000000000Z", "sha256:aa", goodClock,
		[][4]int64{{0, 0, 1000, 10_000_000}, {2, 0, 1000, 30_000_000}})
	b = shardTrace(t, dir, 1, 2, "hostB", "2026-12-03T10:00:00.002500000Z", "sha256:aa", goodClock,
		[][4]int64{{1, 0, 1000, 5_000_000}, {3, 0, 1000, 40_000_000}})
	return a, b
}

// TestMergeAlignsAndOrders: shard 1 started 2.5 ms after shard 0, so its
// times move by +2.5 ms; the merged records are in completion order on
// that clock, each with its shard; the phases' streams add up.
func TestMergeAlignsAndOrders(t *testing.T) {
	a, b := alignedShards(t)
	var buf bytes.Buffer
	res, err := Merge(&buf, []string{b, a}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var dones []int64
	for r.Scan() {
		rec := r.Record()
		if rec.Shard == nil {
			t.Fatalf("record %s has no shard", rec.ID)
		}
		got = append(got, rec.ID+"@"+string(rune('0'+*rec.Shard)))
		dones = append(dones, rec.Done)
		if rec.Chunks[0].T != rec.Done-1_000_000 {
			t.Errorf("%s: chunk moved by a different amount than done", rec.ID)
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	// shard 1's done times 5 ms and 40 ms become 7.5 ms and 42.5 ms, so
	// its r1 comes first and its r3 last.
	if strings.Join(got, " ") != "r1@1 r0@0 r2@0 r3@1" {
		t.Errorf("order %v", got)
	}
	if wantD := []int64{7_500_000, 10_000_000, 30_000_000, 42_500_000}; !equal64(dones, wantD) {
		t.Errorf("done times %v, want %v", dones, wantD)
	}
	h := r.Header()
	if h.StartWall != "2026-12-03T10:00:00Z" || len(h.Shards) != 2 || h.Shards[1].OffsetNs != 2_500_000 || h.Shard != nil {
		t.Errorf("header start %s shards %+v", h.StartWall, h.Shards)
	}
	if h.Phases[0].Concurrency != 4 || h.Phases[0].Requests != 4 || h.Phases[1].Concurrency != 8 {
		t.Errorf("merged phases %+v", h.Phases)
	}
	// Two hosts, max errors 1.5 ms each: worst case 3 ms apart.
	if res.AlignErrorNs != 3_000_000 || res.AlignUnknown || res.Records != 4 {
		t.Errorf("result %+v", res)
	}
}

func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	s0 := shardTrace(t, dir, 0, 3, "h", "2026-12-03T10:00:00Z", "sha256:aa", Clock{}, nil)
	s1 := shardTrace(t, dir, 1, 3, "h", "2026-12-03T10:00:00Z", "sha256:aa", Clock{}, nil)
	// Each odd one out in a folder of its own: a shard's file is named
	// after its index.
	apart := func(sub string, i, n int, host, wl string, clk Clock) string {
		d := filepath.Join(dir, sub)
		os.Mkdir(d, 0o755)
		return shardTrace(t, d, i, n, host, "2026-12-03T10:00:00Z", wl, clk, nil)
	}
	wrongWL := apart("x", 2, 3, "h", "sha256:bb", Clock{})
	wrongN := apart("y", 2, 4, "h", "sha256:aa", Clock{})
	dup := apart("z", 1, 3, "h", "sha256:aa", Clock{})
	far := apart("w", 2, 3, "elsewhere", "sha256:aa", Clock{Source: "adjtimex", Synced: false})

	for _, c := range []struct {
		name  string
		paths []string
		opt   MergeOptions
		want  string
	}{
		{"missing", []string{s0, s1}, MergeOptions{}, "MergeOptions.AllowMissing is off and shard 2 of 3 is missing: give its trace"},
		{"workload", []string{s0, s1, wrongWL}, MergeOptions{}, "replayed workload sha256:bb but"},
		{"count", []string{s0, s1, wrongN}, MergeOptions{}, "the shard counts differ"},
		{"duplicate", []string{s0, s1, dup}, MergeOptions{}, "are both shard 1/3"},
		{"clock", []string{s0, s1, far}, MergeOptions{}, "shard 0's clock gave no error estimate"},
	} {
		_, err := Merge(&bytes.Buffer{}, c.paths, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	res, err := Merge(&bytes.Buffer{}, []string{s0, s1}, MergeOptions{AllowMissing: true})
	if err != nil || len(res.Header.ShardsMissing) != 1 || res.Header.ShardsMissing[0] != 2 {
		t.Errorf("allow-missing: %v %+v", err, res)
	}
	// The clock check is about shards on different hosts: with --allow-clock
	// the merge goes on and says the alignment error is unknown.
	res, err = Merge(&bytes.Buffer{}, []string{s0, s1, far}, MergeOptions{AllowClock: true})
	if err != nil || !res.AlignUnknown {
		t.Errorf("allow-clock: %v %+v", err, res)
	}
	var merged bytes.Buffer
	if _, err := Merge(&merged, []string{s0, s1}, MergeOptions{AllowMissing: true}); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, "merged.trace.zst")
	os.WriteFile(mp, merged.Bytes(), 0o644)
	if _, err := Merge(&bytes.Buffer{}, []string{mp}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "already a merged trace") {
		t.Errorf("merging a merged trace: %v", err)
	}
}

func TestAlignmentError(t *testing.T) {
	c := func(est, mx int64) Shard {
		return Shard{Clock: Clock{Source: "adjtimex", Synced: true, EstErrorNs: est, MaxErrorNs: mx}}
	}
	if e, u := AlignmentError([]Shard{c(1, 4), c(1, 9), c(1, 2)}); e != 13 || u {
		t.Errorf("got %d %v, want 9+4=13", e, u)
	}
	if e, u := AlignmentError([]Shard{c(5, 0), c(7, 0)}); e != 12 || u {
		t.Errorf("est only: got %d %v, want 12", e, u)
	}
	if _, u := AlignmentError([]Shard{c(1, 1), {}}); !u {
		t.Error("a shard without a clock figure must make the error unknown")
	}
}

func equal64(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMergedGolden reads the committed merged trace of format 1.1 (shard
// entries, header shards): every later build must read it the same way.
// -update rewrites it from the two shards of TestMergeAlignsAndOrders.
func TestMergedGolden(t *testing.T) {
	name := filepath.Join(goldenDir, "v1", "merged-1.1.trace.zst")
	if *update {
		a, b := alignedShards(t)
		var buf bytes.Buffer
		if _, err := Merge(&buf, []string{a, b}, MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFile(t, name, buf.Bytes())
	}
	r := openTest(t, name)
	var got []string
	for r.Scan() {
		rec := r.Record()
		got = append(got, rec.ID+"@"+string(rune('0'+*rec.Shard)))
	}
	if r.Err() != nil || r.Truncated() {
		t.Fatal(r.Err(), r.Truncated())
	}
	h := r.Header()
	if strings.Join(got, " ") != "r1@1 r0@0 r2@0 r3@1" || len(h.Shards) != 2 || h.Shards[1].Host != "hostB" || h.Shards[1].OffsetNs != 2_500_000 {
		t.Errorf("merged golden: records %v, shards %+v", got, h.Shards)
	}
}

// BenchmarkMerge merges 4 shard traces of a synthetic count-up run of
// 10,000 requests × 256 tokens (2.56 M tokens, dealt round-robin over the
// shards: big enough that opening the files and their zstd state is a
// small share). tok/s
// counts output tokens through the merge: read, move onto the common
// clock, re-encode and compress. The target is ≥ 20 M tok/s
// (docs/PERFORMANCE.md); tok/cpu-s is the figure a busy machine does not
// distort.
func BenchmarkMerge(b *testing.B) {
	c := synthConfig{Requests: 10_000, Tokens: 256, Concurrency: 64, Seed: 5}
	recs := synthRun(c)
	toks := outputTokens(recs)
	dir := b.TempDir()
	const n = 4
	var paths []string
	for s := 0; s < n; s++ {
		h := goldenV1Header
		h.Shard = &Shard{Index: s, Count: n, Host: "one"}
		h.StartWall = fmt.Sprintf("2026-12-03T10:00:00.00%d000000Z", s)
		p := filepath.Join(dir, fmt.Sprintf("s%d.trace.zst", s))
		w, err := Create(p, h, WithFlushInterval(0))
		if err != nil {
			b.Fatal(err)
		}
		for i := s; i < len(recs); i += n {
			if err := w.Write(&recs[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	// The synthetic records are 200 MB of heap the merge never sees: drop
	// them so the GC's marking measures the merge, not the fixture.
	nrec := len(recs)
	recs = nil
	runtime.GC()
	b.Run(sizeName(c), func(b *testing.B) {
		b.ReportAllocs()
		var ms runtime.MemStats
		cpu0 := cputime.Process()
		for b.Loop() {
			res, err := Merge(io.Discard, paths, MergeOptions{})
			if err != nil || res.Records != nrec {
				b.Fatalf("merged %v records: %v", res, err)
			}
		}
		sec := b.Elapsed().Seconds()
		b.ReportMetric(float64(toks)*float64(b.N)/sec, "tok/s")
		if cpu := (cputime.Process() - cpu0).Seconds(); cpu > 0 {
			b.ReportMetric(float64(toks)*float64(b.N)/cpu, "tok/cpu-s")
		}
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	})
}

// TestMergeRefusesOtherRuns: shards of one workload and shard count that are
// not of one run are refused before a record is merged, each with a one-line
// reason naming the file: starts apart with no common start, starts not
// explained by a shard's recorded lateness, another model or label, a
// request in two shards or twice in one, a start in year 1 and an impossible
// shard count.
func TestMergeRefusesOtherRuns(t *testing.T) {
	base := t.TempDir()
	n := 0
	shard := func(idx int, start string, recs [][4]int64, edit func(*Header)) string {
		t.Helper()
		n++
		dir := filepath.Join(base, fmt.Sprint(n))
		os.Mkdir(dir, 0o755)
		p := shardTrace(t, dir, idx, 2, "h", start, "sha256:aa", goodClock, recs)
		if edit != nil {
			r, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			h := r.Header()
			var all []Record
			for r.Scan() {
				all = append(all, *r.Record())
			}
			r.Close()
			edit(&h)
			w, err := Create(p+".new", h)
			if err != nil {
				t.Fatal(err)
			}
			for i := range all {
				w.Write(&all[i])
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			os.Rename(p+".new", p)
		}
		return p
	}
	const t0 = "2026-12-03T10:00:00Z"
	r0 := [][4]int64{{0, 0, 1000, 10_000_000}, {2, 0, 1000, 30_000_000}}
	r1 := [][4]int64{{1, 0, 1000, 5_000_000}, {3, 0, 1000, 40_000_000}}
	s0 := shard(0, t0, r0, nil)
	at := func(late int64) func(*Header) {
		return func(h *Header) { h.Shard.StartAt, h.Shard.StartLateNs = t0, late }
	}
	for _, c := range []struct {
		name   string
		first  string
		second string
		want   string
	}{
		{"ten minutes apart", s0, shard(1, "2026-12-03T10:10:00Z", r1, nil), "started 10m0s after"},
		{"a common start and none", s0, shard(1, t0, r1, at(0)), "had the common start " + t0 + " but"},
		{"away from the common start", shard(0, t0, r0, at(0)), shard(1, "2026-12-03T10:10:00Z", r1, at(0)), "10m0s after its common start"},
		{"model", s0, shard(1, t0, r1, func(h *Header) { h.Model = "other" }), `ran model "other" but`},
		{"label", s0, shard(1, t0, r1, func(h *Header) { h.Label = "Q8" }), `ran label "Q8" but`},
		{"relabelled", s0, shard(1, t0, r0, nil), "holds request 0, which is also in"},
		{"twice", s0, shard(1, t0, append(r1, r1[0]), nil), "appears twice"},
		{"year 1", s0, shard(1, "0001-01-01T00:00:00Z", r1, nil), "is not one a run can have"},
		{"count", s0, shard(1, t0, r1, func(h *Header) { h.Shard.Count = 1 << 30 }), "which no sharded run has"},
	} {
		_, err := Merge(&bytes.Buffer{}, []string{c.first, c.second}, MergeOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	// Late by 3 s and saying so is one run.
	if _, err := Merge(&bytes.Buffer{}, []string{shard(0, t0, r0, at(0)), shard(1, "2026-12-03T10:00:03Z", r1, at(3e9))}, MergeOptions{}); err != nil {
		t.Errorf("a shard late by 3 s that says so: %v", err)
	}
}
