// Package selftest is llmreplay's fidelity harness: it measures the
// client itself, against the simulator's fast profile, so that a figure
// llmreplay reports can be trusted to be the server's and not the client's.
//
// The simulator runs in a child process (the harness re-executes its own
// binary), so client and server share the machine's cores as they would on
// a benchmark host but getrusage(RUSAGE_SELF) in this process counts the
// client alone: the replay engine, the stream parser and the trace writer.
//
// Before the sections it measures the machine's own timing noise (Floor),
// and it runs the sections Repeats times, so that every figure has a median
// and a spread and is judged beside the noise of the run it came from.
//
// Six sections, each a plain replay.Run against that child (nothing in the
// client is special-cased for the harness):
//  1. client CPU per streamed token at 16, 256 and 4,096 streams;
//  2. the most streams held open together for 60 s without a client error;
//  3. timestamp error (arrival minus the simulator's send time) at 16, 256
//     and 1,024 aligned streams paced 20 ms per token and at 10,000 streams,
//     each over plain HTTP and over TLS to loopback (stamps.go);
//  4. open-loop schedule lateness (actual minus scheduled send time);
//  5. trace bytes per output token;
//  6. analysis speed and peak heap for a 10-million-token trace.
package selftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"

	"github.com/llmreplay/llmreplay/internal/cputime"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// Config is one harness run.
type Config struct {
	// Short runs every section at a smaller scale (a few seconds in all),
	// for CI: the figures show regressions, not the targets.
	Short bool
	// Child is the command that starts the simulator child; the harness
	// appends ServeChild's flags. ChildEnv is added to its environment.
	Child    []string
	ChildEnv []string
	// Dir holds the workloads and traces; "" means a temporary folder,
	// removed afterwards.
	Dir string
	// Progress, if set, gets one line per step.
	Progress io.Writer
	// Sections limits the run to these section numbers (1–6); empty runs
	// all.
	Sections []int
	// Plan, if set, replaces FullPlan or ShortPlan (benchmarks use it to
	// run one level of one section).
	Plan *Plan
	// ScrapeInterval, when not zero, makes every replay scrape the
	// simulator child's /metrics this often (replay's --server-metrics
	// auto), to measure what scraping costs the timestamps.
	ScrapeInterval time.Duration
	// Timestamps is every replay's timestamp source (replay.Config's;
	// "" is auto). Section 3 reports both sources of one run wherever
	// kernel stamps are on (stamps.go).
	Timestamps string
	// NormalPriority is every replay's (replay.Config's): the dispatcher's
	// thread asks for no realtime policy.
	NormalPriority bool
	// Repeats is how many times every section runs (the noise floor is
	// measured again before each run); 0 means 3, or 1 with Short.
	Repeats int
	// FloorWakeups, when not zero, replaces the plan's number of wake-ups
	// of the noise-floor measurement.
	FloorWakeups int
}

// Plan is the scale of each section.
type Plan struct {
	CPUStreams   []int // section 1
	CPUTokens    int   // output tokens per request
	CPUTotal     int   // at least this many tokens per level (whole bursts)
	HoldStreams  []int // section 2, tried in order until one fails
	HoldFor      time.Duration
	HoldInterval time.Duration // pacing of the held streams
	HoldRate     float64       // streams opened per second (open loop)
	StampStreams []int         // section 3, aligned bursts
	StampPace    time.Duration
	StampTokens  int
	// StampFirstToken holds each burst stream's first token this long
	// after the simulator received the request (its prefill), so that the
	// streams begin once the whole burst is in: sending 1,024 requests
	// and reading their first tokens at once is a burst's send, which is
	// not what the level measures (stamps.go).
	StampFirstToken time.Duration
	// StampWide is section 3's largest level (0: none): so many streams
	// opened at StampWideRate per second, each StampWideTokens tokens
	// StampWidePace apart (stamps.go says why not a burst).
	StampWide       int
	StampWideRate   float64
	StampWidePace   time.Duration
	StampWideTokens int
	// StampTLS runs every section-3 level a second time over TLS.
	StampTLS    bool
	SchedRates  []float64 // section 4, requests/s
	SchedFor    time.Duration
	SchedTokens int
	// BurstSize requests released together, Bursts times, on connections
	// opened beforehand: section 4's burst send spread (0: none).
	BurstSize, Bursts int
	SizeStreams       int // section 5
	SizeTokens        int
	SizePace          time.Duration
	AnalyzeTotal      int // section 6, output tokens
	// FloorWakeups sleeps to absolute deadlines FloorInterval apart
	// measure the machine's noise floor before each run; 0 skips it.
	FloorWakeups  int
	FloorInterval time.Duration
}

// FullPlan is the scale; ShortPlan is the CI version.
var (
	FullPlan = Plan{
		CPUStreams: []int{16, 256, 4096}, CPUTokens: 256, CPUTotal: 1 << 20,
		HoldStreams: []int{1000, 4000, 10000}, HoldFor: 60 * time.Second, HoldInterval: time.Second, HoldRate: 500,
		StampStreams: []int{16, 256, 1024}, StampPace: 20 * time.Millisecond, StampTokens: 100, StampFirstToken: 500 * time.Millisecond,
		StampWide: 10000, StampWideRate: 1000, StampWidePace: time.Second, StampWideTokens: 30, StampTLS: true,
		SchedRates: []float64{100, 500, 2000}, SchedFor: 5 * time.Second, SchedTokens: 16, BurstSize: 32, Bursts: 10,
		SizeStreams: 256, SizeTokens: 256, SizePace: 10 * time.Millisecond,
		AnalyzeTotal: 10_000_000,
		FloorWakeups: 5000, FloorInterval: 2 * time.Millisecond,
	}
	ShortPlan = Plan{
		CPUStreams: []int{16, 256}, CPUTokens: 256, CPUTotal: 1 << 16,
		HoldStreams: []int{200}, HoldFor: time.Second, HoldInterval: 50 * time.Millisecond, HoldRate: 2000,
		StampStreams: []int{16, 256}, StampPace: 20 * time.Millisecond, StampTokens: 25, StampFirstToken: 100 * time.Millisecond,
		StampWide: 300, StampWideRate: 2000, StampWidePace: 50 * time.Millisecond, StampWideTokens: 10, StampTLS: true,
		SchedRates: []float64{100, 500}, SchedFor: 500 * time.Millisecond, SchedTokens: 16, BurstSize: 32, Bursts: 3,
		SizeStreams: 64, SizeTokens: 64, SizePace: 10 * time.Millisecond,
		AnalyzeTotal: 500_000,
		FloorWakeups: 250, FloorInterval: 2 * time.Millisecond,
	}
)

// Result is everything the harness measured.
type Result struct {
	Short   bool
	Machine Machine
	Plan    Plan
	// NoFileSoft and NoFileHard are RLIMIT_NOFILE after raising the soft
	// limit to the hard one.
	NoFileSoft, NoFileHard uint64

	// Runs describes each repetition of the sections: its noise floor,
	// load and steal. Every row below names its run (1-based).
	Runs     []RunInfo
	CPU      []CPURow
	Hold     []HoldRow
	Stamp    []StampRow
	Sched    []SchedRow
	Burst    []BurstRow
	Size     []SizeRow
	Analysis []AnalysisRow
	Elapsed  time.Duration
}

// RunInfo is one repetition of the sections.
type RunInfo struct {
	Run int
	// Floor is the wake-up floor at the normal policy (SCHED_OTHER),
	// FloorFIFO at SCHED_FIFO (Wakeups 0 when the kernel refused it,
	// FIFOWhy says why).
	Floor, FloorFIFO Floor
	FIFOWhy          string
	// LoadStart and LoadEnd are /proc/loadavg before the floor was
	// measured and after the run's last section.
	LoadStart, LoadEnd [3]float64
	// Steal is the share of the machine's CPU time the hypervisor gave to
	// others during the run (floor and sections); -1 where the OS does not
	// say.
	Steal float64
}

// run returns run n's description; a zero one if there is none.
func (r *Result) run(n int) RunInfo {
	for _, ri := range r.Runs {
		if ri.Run == n {
			return ri
		}
	}
	return RunInfo{Run: n, Steal: -1}
}

// CPURow is section 1 at one concurrency.
type CPURow struct {
	Run                       int // which repetition (1-based)
	Streams, Requests, Failed int
	Tokens                    int64
	// ClientCPU and ServerCPU count from the first phase's start;
	// SetupCPU is the client's before it (the server tokenizer's prompt
	// counts), which streams nothing.
	ClientCPU, ServerCPU time.Duration
	SetupCPU             time.Duration
	// ClientSys is the kernel's part of ClientCPU (getrusage's system
	// time: the reads' system calls, page faults, and the loopback
	// network work done in the client's context), what no change to the
	// client's own code takes away short of making fewer calls.
	ClientSys time.Duration
	Wall      time.Duration
	// GCCPU is the Go runtime's estimate of the client's garbage
	// collection CPU (runtime/metrics /cpu/classes/gc/total:cpu-seconds:
	// the time its Ps spent collecting, so on a busy machine it includes
	// time the threads waited for a core and can pass ClientCPU),
	// Allocs and AllocBytes the heap objects and bytes it allocated
	// (/gc/heap/allocs), all over the same replay.Run.
	GCCPU              time.Duration
	Allocs, AllocBytes uint64
}

// GCShare is the garbage collector's share of the client's CPU time.
func (r CPURow) GCShare() float64 {
	if r.ClientCPU <= 0 {
		return 0
	}
	return float64(r.GCCPU) / float64(r.ClientCPU)
}

// AllocsPerToken is the heap objects the client allocated per token.
func (r CPURow) AllocsPerToken() float64 {
	if r.Tokens <= 0 {
		return 0
	}
	return float64(r.Allocs) / float64(r.Tokens)
}

// BytesPerToken is the heap bytes the client allocated per token.
func (r CPURow) BytesPerToken() float64 {
	if r.Tokens <= 0 {
		return 0
	}
	return float64(r.AllocBytes) / float64(r.Tokens)
}

// ClientPerToken is the client's CPU time per streamed token.
func (r CPURow) ClientPerToken() time.Duration { return perToken(r.ClientCPU, r.Tokens) }

// ClientSysPerToken is the kernel's part of ClientPerToken.
func (r CPURow) ClientSysPerToken() time.Duration { return perToken(r.ClientSys, r.Tokens) }

// ServerPerToken is the simulator child's CPU time per streamed token.
func (r CPURow) ServerPerToken() time.Duration { return perToken(r.ServerCPU, r.Tokens) }

func perToken(d time.Duration, n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	return d / time.Duration(n)
}

// HoldRow is section 2 at one stream count.
type HoldRow struct {
	Run     int // which repetition (1-based)
	Streams int
	OK      int
	Errors  map[trace.ErrorClass]int
	// Peak is the most streams open at one instant (response headers
	// received, response not yet ended).
	Peak int
	// Together is how long all streams were open at once: the earliest
	// end minus the latest response-header arrival.
	Together time.Duration
	Message  string // the first error's message, if any
}

// Held reports whether every stream completed and all were open together
// for at least d.
func (r HoldRow) Held(d time.Duration) bool {
	return r.OK == r.Streams && r.Peak == r.Streams && r.Together >= d
}

// StampRow is section 3 at one concurrency over one transport.
type StampRow struct {
	Run     int // which repetition (1-based)
	Streams int
	// TLS says the simulator served HTTPS (TransportTLS), else plain HTTP
	// (TransportPlain), both on loopback.
	TLS bool
	// OpenRate is how many streams were opened per second; 0 means all
	// at once (an aligned burst). Pace is the time between a stream's
	// tokens.
	OpenRate float64
	Pace     time.Duration
	// FirstToken is how long the simulator held each stream's first token
	// after the request arrived (Plan.StampFirstToken; 0: none).
	FirstToken time.Duration
	// Peak is the most streams open at one instant (as HoldRow's).
	Peak          int
	Chunks        int
	Failed        int
	P50, P99, Max time.Duration
	// ClientCPU is the client's CPU time over the run: with one event per
	// read, the per-token cost is higher than in section 1's bulk reads.
	// ServerCPU is the simulator child's. ClientSys is the kernel's part
	// of ClientCPU (CPURow's).
	ClientCPU, ServerCPU, ClientSys time.Duration
	// Sources are the errors by timestamp source of the same run, and
	// FellBack the requests that kept user-space times (stamps.go).
	Sources  []StampSource
	FellBack int
	// ReadLate counts the chunks read late by the simulator's send stamps
	// (readLate): their error is the client's delay. Marked counts the
	// chunks the trace marks read late, Unmarked those of ReadLate it did
	// not mark (0 is the target: no late read goes unsaid).
	ReadLate, Marked, Unmarked int
	// EndAfterLast is the p99 of a successful request's end minus its last
	// chunk (endAfterLast): both from the kernel's stamps of their reads.
	EndAfterLast time.Duration
	// Wall is the replay's wall time, over which ClientCPU and ServerCPU
	// were counted.
	Wall time.Duration
}

// Busy is the share of the machine's cores the client and the simulator
// kept busy together over the run: (client CPU + server CPU) / (wall ×
// cores). Near 1 the two processes had the machine to themselves only
// just, and any other demand (a collection, the kernel's own work) puts
// the client a pace behind (docs/PERFORMANCE.md, "Where the targets
// stand"). 0 when it was not measured.
func (r StampRow) Busy(cores int) float64 {
	if r.Wall <= 0 || cores <= 0 {
		return 0
	}
	return float64(r.ClientCPU+r.ServerCPU) / (float64(r.Wall) * float64(cores))
}

// SchedRow is section 4 at one rate.
type SchedRow struct {
	Run           int // which repetition (1-based)
	Rate          float64
	Requests      int
	Failed        int
	P50, P99, Max time.Duration
	// ClientCPU and ServerCPU are the two processes' CPU time over the run.
	ClientCPU, ServerCPU time.Duration
	// Dispatch is where the dispatcher's waits ended and how long it
	// spun (replay.DispatchStats); Wall the run's wall time, over which
	// the spin is a share of a core.
	Dispatch replay.DispatchStats
	Wall     time.Duration
	// Policy is the scheduling policy the dispatcher's thread got.
	Policy string
	// Written counts the requests the dispatcher wrote itself at their
	// due times (replay's Summary.ReleaseWrites); the others sent
	// themselves from their goroutines.
	Written int
}

// BurstRow is section 4's burst: Size requests released together Bursts
// times. A burst's spread is its last send minus its first (each send
// stamped right before its write, which over plain HTTP the release
// makes itself, one request after another).
type BurstRow struct {
	Run               int // which repetition (1-based)
	Size, Bursts      int
	Failed            int
	SpreadP50, Spread time.Duration // the bursts' median and largest
	Policy            string
}

// SpinShare is the dispatcher's spin time over the run's wall time: the
// share of a core the spin took at most.
func (s SchedRow) SpinShare() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Dispatch.Spin) / float64(s.Wall)
}

// SizeRow is section 5 for one trace.
type SizeRow struct {
	Run    int // which repetition (1-based)
	What   string
	Bytes  int64
	Tokens int64
}

// PerToken is the trace's bytes per output token.
func (r SizeRow) PerToken() float64 {
	if r.Tokens == 0 {
		return 0
	}
	return float64(r.Bytes) / float64(r.Tokens)
}

// AnalysisRow is section 6.
type AnalysisRow struct {
	Run       int // which repetition (1-based)
	Tokens    int64
	Requests  int
	FileBytes int64
	Elapsed   time.Duration
	PeakHeap  uint64 // heap in use above the baseline, sampled every 5 ms
	SysAtPeak uint64 // memory the Go runtime held from the OS (MemStats.Sys) at the peak, all sections so far
	// CPU is the process's CPU time during the analysis: on a machine
	// shared with other work, tokens per CPU second shows the analysis's
	// own cost when the wall-clock rate does not.
	CPU time.Duration
}

// TokensPerCPUSecond is the analysis speed per second of CPU time.
func (r AnalysisRow) TokensPerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Tokens) / r.CPU.Seconds()
}

// TokensPerSecond is the analysis speed.
func (r AnalysisRow) TokensPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Tokens) / r.Elapsed.Seconds()
}

// Run runs the harness. A returned error means a section could not run
// at all; client errors during a section are figures, in the Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	h := &harness{cfg: cfg, plan: FullPlan}
	if cfg.Short {
		h.plan = ShortPlan
	}
	if cfg.Plan != nil {
		h.plan = *cfg.Plan
	}
	res := &Result{Short: cfg.Short, Machine: machine(), Plan: h.plan}
	res.NoFileSoft, res.NoFileHard = raiseNoFile()
	h.res = res
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "llmreplay-selftest-")
		if err != nil {
			return nil, fielderr.New("selftest: Config", "Dir", fmt.Sprintf("is needed: no scratch folder could be made (%v)", err), "name a writable folder")
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("selftest: cannot create %s: %w", dir, err)
	}
	h.dir = dir
	repeats := cfg.Repeats
	if repeats <= 0 {
		repeats = 3
		if cfg.Short {
			repeats = 1
		}
	}
	wake := h.plan.FloorWakeups
	if cfg.FloorWakeups > 0 {
		wake = cfg.FloorWakeups
	}
	interval := h.plan.FloorInterval
	if interval <= 0 {
		interval = 2 * time.Millisecond
	}
	sections := []struct {
		n   int
		run func(context.Context) error
	}{
		{1, h.cpu}, {2, h.hold}, {3, h.stamp}, {4, h.sched}, {5, h.size}, {6, h.analysis},
	}
	for run := 1; run <= repeats; run++ {
		h.run, h.sizeTrace = run, ""
		res.Runs = append(res.Runs, RunInfo{Run: run, LoadStart: loadAverage(), Steal: -1})
		ri := &res.Runs[len(res.Runs)-1]
		st0 := readCPUStat()
		if wake > 0 {
			h.logf("run %d of %d: machine noise floor, %d wake-ups every %v", run, repeats, wake, interval)
			ri.Floor = measureFloor(wake, interval)
			h.logf("   → SCHED_OTHER: late p50 %v p99 %v max %v, load %.2f", ri.Floor.P50, ri.Floor.P99, ri.Floor.Max, ri.Floor.Load[0])
			ri.FloorFIFO, ri.FIFOWhy = measureFloorFIFO(wake, interval)
			if ri.FIFOWhy != "" {
				h.logf("   → SCHED_FIFO: not permitted (%s)", ri.FIFOWhy)
			} else {
				h.logf("   → SCHED_FIFO: late p50 %v p99 %v max %v", ri.FloorFIFO.P50, ri.FloorFIFO.P99, ri.FloorFIFO.Max)
			}
		}
		for _, s := range sections {
			if !h.wants(s.n) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if err := s.run(ctx); err != nil {
				return res, fmt.Errorf("selftest run %d section %d: %w", run, s.n, err)
			}
		}
		ri.Steal = StealShare(st0, readCPUStat())
		ri.LoadEnd = loadAverage()
	}
	res.Elapsed = time.Since(start)
	res.Machine.LoadEnd = loadAverage()
	return res, nil
}

type harness struct {
	cfg  Config
	plan Plan
	res  *Result
	dir  string
	seq  int
	run  int // the repetition being run, 1-based
	// sizeTrace is section 5's trace, the template for section 6.
	sizeTrace string
	// conn is how replayRun connects; section 3 sets it per level.
	conn connOpts
}

// connOpts: tls makes the child serve HTTPS (section 3's TLS rows);
// prewarm opens the phase's connections before it starts (replay's
// --prewarm), so a burst's streams start together; userTimes keeps each
// chunk's user-space time beside its kernel stamp (replay's
// --chunk-user-times), so section 3 compares both sources event by event.
type connOpts struct {
	tls, prewarm, userTimes bool
	firstToken              time.Duration // the child's sim.Config.FirstTokenDelay
}

func (h *harness) logf(format string, a ...any) {
	if h.cfg.Progress != nil {
		fmt.Fprintf(h.cfg.Progress, "selftest: "+format+"\n", a...)
	}
}

// replayOut is one replay's records, read back from its trace.
type replayOut struct {
	records []*trace.Record
	path    string
	wall    time.Duration
	// cpu is this process's CPU during replay.Run from its first phase's
	// start, setupCPU before it (the server tokenizer's prompt counts);
	// sys is the kernel's part of cpu (getrusage's system time).
	cpu, setupCPU, sys time.Duration
	// gc is what the Go runtime counts as garbage collection in it (its
	// estimate: mark workers, assists, pauses); allocs the heap objects
	// allocated in it.
	gc                 time.Duration
	allocs, allocBytes uint64
	sum                *replay.Summary
}

// replayRun builds a workload, replays it against a fresh child and reads
// the trace back. before and after run around replay.Run, outside nothing
// but the CPU bracket.
func (h *harness) replayRun(ctx context.Context, name string, bc workload.BuildConfig, pace time.Duration, sendTimes bool, onChild func(*child, bool)) (*replayOut, error) {
	if bc.InputTokens == nil {
		bc.InputTokens = []int{64}
	}
	bc.Seed = 1
	bc.SaltWords = workload.NoSaltWords
	t00 := time.Now()
	wl, err := workload.Build(bc)
	if err != nil {
		return nil, err
	}
	h.logf("   workload built in %v", time.Since(t00).Round(time.Millisecond))
	t00 = time.Now()
	c, err := startChild(ctx, childSpec{Argv: h.cfg.Child, Env: h.cfg.ChildEnv, TLS: h.conn.tls, FirstToken: h.conn.firstToken}, pace, sendTimes, wl.Header.Tokenizer)
	if err != nil {
		return nil, err
	}
	defer c.kill()
	h.logf("   simulator child listening after %v", time.Since(t00).Round(time.Millisecond))
	h.seq++
	out := &replayOut{path: filepath.Join(h.dir, fmt.Sprintf("%02d-%s.trace.zst", h.seq, name))}
	rc := replay.Config{
		Workload: wl, URL: c.url, API: "openai-chat", Model: "fast", Label: "selftest " + name,
		Trace: out.path, Simulated: true, SimProfile: "fast", Grace: time.Second,
		Timestamps:     h.cfg.Timestamps,
		NormalPriority: h.cfg.NormalPriority,
		Insecure:       h.conn.tls, // the child's certificate is self-signed
		Prewarm:        h.conn.prewarm,

		ChunkUserTimes: h.conn.userTimes,
	}
	if h.cfg.ScrapeInterval > 0 {
		rc.ServerMetrics, rc.ServerMetricsInterval = replay.ServerMetricsAuto, h.cfg.ScrapeInterval
	}
	// Not runtime.GC alone: after section 3's 10,000 streams the heap falls
	// from ~900 MB to ~100 MB, and the runtime's background scavenger then
	// spent the next section returning the rest to the kernel; section 4's
	// lateness p99 at 100 req/s was 7.2 ms after section 3 and 28 µs with
	// the memory returned here, before the clock starts.
	debug.FreeOSMemory()
	if onChild != nil {
		onChild(c, true)
	}
	gc0 := readGC()
	cpu0 := cputime.Split()
	t0 := time.Now()
	// The CPU figures count from the first phase's start: what the run
	// does before it (the server tokenizer's count of every distinct
	// prompt, an HTTP round trip each, the /metrics probe) streams
	// nothing and cannot hold a stream back; it is out.setupCPU.
	start, started := cpu0, false
	rc.OnPhase = func(int, []workload.Phase) {
		if started {
			return
		}
		started = true
		if onChild != nil {
			onChild(c, true)
		}
		gc0 = readGC()
		start = cputime.Split()
	}
	out.sum, err = replay.Run(ctx, rc)
	out.wall = time.Since(t0)
	cpu1 := cputime.Split()
	gc1 := readGC()
	run := cpu1.Sub(start)
	out.cpu, out.sys, out.setupCPU = run.Total(), run.System, start.Sub(cpu0).Total()
	out.gc, out.allocs, out.allocBytes = gc1.cpu-gc0.cpu, gc1.allocs-gc0.allocs, gc1.bytes-gc0.bytes
	if onChild != nil {
		onChild(c, false)
	}
	if err != nil {
		return nil, err
	}
	h.logf("   replay took %v", out.wall.Round(time.Millisecond))
	t00 = time.Now()
	if err := c.stop(); err != nil {
		return nil, err
	}
	h.logf("   simulator child stopped after %v", time.Since(t00).Round(time.Millisecond))
	out.records, err = readTrace(out.path)
	return out, err
}

func readTrace(path string) ([]*trace.Record, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []*trace.Record
	for r.Scan() {
		rec := *r.Record()
		rec.Chunks = slices.Clone(rec.Chunks)
		recs = append(recs, &rec)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("reading back %s: %w", path, err)
	}
	return recs, nil
}

// textTokens counts the chunks carrying output text: the fast profile
// streams one token per chunk.
func textTokens(recs []*trace.Record) int64 {
	var n int64
	for _, r := range recs {
		for i := range r.Chunks {
			if r.Chunks[i].Text != "" || r.Chunks[i].Reasoning != "" {
				n++
			}
		}
	}
	return n
}

func failed(recs []*trace.Record) int {
	n := 0
	for _, r := range recs {
		if r.Error != nil {
			n++
		}
	}
	return n
}

// cpu is section 1: the client's CPU per streamed token.
func (h *harness) cpu(ctx context.Context) error {
	p := h.plan
	for _, n := range p.CPUStreams {
		repeats := max(1, (p.CPUTotal+n*p.CPUTokens-1)/(n*p.CPUTokens))
		h.logf("1. client CPU: %d streams × %d tokens, %d burst(s)", n, p.CPUTokens, repeats)
		var srv0, srv1 time.Duration
		out, err := h.replayRun(ctx, fmt.Sprintf("cpu-%d", n), workload.BuildConfig{
			MaxTokens: p.CPUTokens, Schedule: fmt.Sprintf("burst:%d", n), Repeats: repeats,
		}, 0, true, childCPU(&srv0, &srv1))
		if err != nil {
			return err
		}
		row := CPURow{Run: h.run,
			Streams: n, Requests: len(out.records), Failed: failed(out.records),
			Tokens: textTokens(out.records), ClientCPU: out.cpu, SetupCPU: out.setupCPU, ClientSys: out.sys, ServerCPU: srv1 - srv0, Wall: out.wall,
			GCCPU: out.gc, Allocs: out.allocs, AllocBytes: out.allocBytes,
		}
		h.res.CPU = append(h.res.CPU, row)
		h.logf("   → %d tokens, client %v/token (kernel %v of it; GC %.0f%%, %.1f allocations/token; %v of CPU before the first phase), server %v/token, %d failed",
			row.Tokens, row.ClientPerToken(), row.ClientSysPerToken(), 100*row.GCShare(), row.AllocsPerToken(), out.setupCPU.Round(time.Millisecond), row.ServerPerToken(), row.Failed)
		// Section 1's traces give section 5 its comparison rows (send
		// times on) for free, but they belong to section 5's table: a
		// user who asked for --section 1 alone expects section 1 alone.
		if h.wants(5) {
			h.res.Size = append(h.res.Size, h.sizeRow(fmt.Sprintf("fast, %d streams, send times on", n), out))
		}
	}
	return nil
}

// wants reports whether section n is among those the run was asked for.
func (h *harness) wants(n int) bool {
	return len(h.cfg.Sections) == 0 || slices.Contains(h.cfg.Sections, n)
}

// childCPU reads the simulator child's CPU time before and after a replay.
func childCPU(before, after *time.Duration) func(*child, bool) {
	return func(c *child, first bool) {
		if first {
			*before = c.cpu()
		} else {
			*after = c.cpu()
		}
	}
}

func (h *harness) sizeRow(what string, out *replayOut) SizeRow {
	st, _ := os.Stat(out.path)
	var b int64
	if st != nil {
		b = st.Size()
	}
	return SizeRow{Run: h.run, What: what, Bytes: b, Tokens: textTokens(out.records)}
}

// hold is section 2: N streams open together for HoldFor. The streams are
// opened at HoldRate per second rather than all at once: released together,
// 10,000 connections overflow the simulator's accept loop (their response
// headers came 7.5–13.6 s after release on a loaded 2-core machine and the
// server reset those still unread after its header timeout, then 10 s), which
// measures the server's connection storm, not how many streams the client
// holds. Each stream lasts long enough that all are open together for
// HoldFor once the last has opened.
func (h *harness) hold(ctx context.Context) error {
	p := h.plan
	for _, n := range p.HoldStreams {
		ramp := time.Duration(float64(n) / p.HoldRate * float64(time.Second))
		// Headroom for opening late on a busy machine: the streams must
		// still all be open together for HoldFor.
		slack := max(ramp/2, 5*p.HoldInterval)
		tokens := int((p.HoldFor+ramp+slack+p.HoldInterval-1)/p.HoldInterval) + 1
		h.logf("2. holding %d streams for %v: opened at %g/s, %d tokens %v apart", n, p.HoldFor, p.HoldRate, tokens, p.HoldInterval)
		out, err := h.replayRun(ctx, fmt.Sprintf("hold-%d", n), workload.BuildConfig{
			MaxTokens: tokens, Schedule: fmt.Sprintf("rate:%g", p.HoldRate), Arrival: "constant", Requests: n, InputTokens: []int{64},
		}, p.HoldInterval, false, nil)
		if err != nil {
			return err
		}
		row := holdRow(n, out.records)
		row.Run = h.run
		h.res.Hold = append(h.res.Hold, row)
		h.logf("   → %d ok, peak %d open, all open together %v", row.OK, row.Peak, row.Together.Round(time.Millisecond))
		if !row.Held(p.HoldFor) {
			break
		}
	}
	return nil
}

func holdRow(n int, recs []*trace.Record) HoldRow {
	row := HoldRow{Streams: n, Errors: map[trace.ErrorClass]int{}}
	type ev struct {
		t     int64
		delta int
	}
	var evs []ev
	var lastOpen, firstEnd int64 = 0, 1<<63 - 1
	for _, r := range recs {
		if r.Error != nil {
			row.Errors[r.Error.Class]++
			if row.Message == "" {
				row.Message = r.Error.Message
			}
		} else {
			row.OK++
		}
		if r.Headers == 0 {
			continue
		}
		evs = append(evs, ev{r.Headers, 1}, ev{r.Done, -1})
		lastOpen = max(lastOpen, r.Headers)
		firstEnd = min(firstEnd, r.Done)
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta // an end before an open at the same instant
	})
	open := 0
	for _, e := range evs {
		open += e.delta
		row.Peak = max(row.Peak, open)
	}
	if len(evs) > 0 && firstEnd > lastOpen {
		row.Together = time.Duration(firstEnd - lastOpen)
	}
	return row
}

// sched is section 4: open-loop lateness at constant arrival rates, on
// connections opened beforehand (replay's --prewarm, as the CLI's
// default), whose requests the dispatcher writes itself.
func (h *harness) sched(ctx context.Context) error {
	p := h.plan
	h.conn = connOpts{prewarm: true}
	defer func() { h.conn = connOpts{} }()
	for _, rate := range p.SchedRates {
		n := int(rate * p.SchedFor.Seconds())
		h.logf("4. schedule precision: %d requests at %g/s, constant arrivals", n, rate)
		var srv0, srv1 time.Duration
		out, err := h.replayRun(ctx, fmt.Sprintf("sched-%g", rate), workload.BuildConfig{
			MaxTokens: p.SchedTokens, Schedule: fmt.Sprintf("rate:%g", rate), Arrival: "constant", Requests: n,
		}, 0, false, childCPU(&srv0, &srv1))
		if err != nil {
			return err
		}
		var d []int64
		for _, r := range out.records {
			if r.Sent != 0 {
				d = append(d, r.Sent-r.Scheduled)
			}
		}
		if len(d) == 0 {
			return errors.New("no request was sent")
		}
		p50, p99, mx := quantiles(d)
		h.res.Sched = append(h.res.Sched, SchedRow{Run: h.run, Rate: rate, Requests: len(d), Failed: failed(out.records), P50: p50, P99: p99, Max: mx,
			ClientCPU: out.cpu, ServerCPU: srv1 - srv0, Dispatch: out.sum.Dispatch, Wall: out.wall, Policy: out.sum.DispatchPolicy, Written: out.sum.ReleaseWrites})
		h.logf("   → p50 %v p99 %v max %v; dispatcher: %d waits, %d wake-ups past the deadline, %d begun inside the window, spin %v, %d requests written by it, its own work %v a send",
			p50, p99, mx, out.sum.Dispatch.Waits, out.sum.Dispatch.WakePast, out.sum.Dispatch.LateStart, out.sum.Dispatch.Spin.Round(time.Millisecond), out.sum.ReleaseWrites,
			out.sum.Dispatch.Work/time.Duration(max(1, out.sum.Dispatch.Waits)))
	}
	if p.BurstSize > 0 && p.Bursts > 0 {
		return h.burst(ctx)
	}
	return nil
}

// burst is section 4's burst release: BurstSize requests released
// together, Bursts times, on connections opened beforehand (replay's
// --prewarm, as the CLI's default), so the spread is the client's release
// and sends, not TCP set-ups.
func (h *harness) burst(ctx context.Context) error {
	p := h.plan
	h.logf("4. burst release: %d requests released together, %d times", p.BurstSize, p.Bursts)
	h.conn = connOpts{prewarm: true}
	defer func() { h.conn = connOpts{} }()
	out, err := h.replayRun(ctx, fmt.Sprintf("burst-%d", p.BurstSize), workload.BuildConfig{
		MaxTokens: p.SchedTokens, Schedule: fmt.Sprintf("burst:%d", p.BurstSize), Repeats: p.Bursts,
	}, 0, false, nil)
	if err != nil {
		return err
	}
	row := burstRow(out.records)
	row.Run, row.Size, row.Policy = h.run, p.BurstSize, out.sum.DispatchPolicy
	h.res.Burst = append(h.res.Burst, row)
	h.logf("   → spread p50 %v max %v over %d bursts, %d failed", row.SpreadP50, row.Spread, row.Bursts, row.Failed)
	return nil
}

// burstRow is the send spread of each burst (phase) of recs: its last
// send minus its first, over the requests that were sent.
func burstRow(recs []*trace.Record) BurstRow {
	type span struct{ first, last int64 }
	spans := map[int]*span{}
	var row BurstRow
	for _, r := range recs {
		if r.Error != nil {
			row.Failed++
		}
		if r.Sent == 0 || r.Warmup {
			continue
		}
		sp := spans[r.Phase]
		if sp == nil {
			spans[r.Phase] = &span{r.Sent, r.Sent}
			continue
		}
		sp.first, sp.last = min(sp.first, r.Sent), max(sp.last, r.Sent)
	}
	var spreads []time.Duration
	for _, sp := range spans {
		spreads = append(spreads, time.Duration(sp.last-sp.first))
	}
	row.Bursts = len(spreads)
	row.SpreadP50, _, row.Spread = median(spreads)
	return row
}

// size is section 5: a count-up trace as a benchmark records it, without
// the send-time test field. Its records also seed section 6.
func (h *harness) size(ctx context.Context) error {
	p := h.plan
	h.logf("5. trace size: %d streams × %d tokens paced %v, send times off", p.SizeStreams, p.SizeTokens, p.SizePace)
	out, err := h.replayRun(ctx, "size", workload.BuildConfig{
		MaxTokens: p.SizeTokens, Schedule: fmt.Sprintf("burst:%d", p.SizeStreams), Repeats: 1, InputTokens: []int{800},
	}, p.SizePace, false, nil)
	if err != nil {
		return err
	}
	if f := failed(out.records); f > 0 {
		return fmt.Errorf("%d of %d requests failed in the trace-size run", f, len(out.records))
	}
	// The target's row leads its run's rows.
	at := slices.IndexFunc(h.res.Size, func(s SizeRow) bool { return s.Run == h.run })
	if at < 0 {
		at = len(h.res.Size)
	}
	h.res.Size = slices.Insert(h.res.Size, at, h.sizeRow(fmt.Sprintf("count-up, %d streams paced %v (the target's case)", p.SizeStreams, p.SizePace), out))
	h.sizeTrace = out.path
	return nil
}

func quantiles(d []int64) (p50, p99, mx time.Duration) {
	slices.Sort(d)
	q := func(f float64) time.Duration {
		i := int(f*float64(len(d))+0.999999) - 1 // nearest rank
		return time.Duration(d[min(max(i, 0), len(d)-1)])
	}
	return q(0.50), q(0.99), time.Duration(d[len(d)-1])
}

// Machine describes where the harness ran.
type Machine struct {
	Cores     int
	CPU       string
	GoVersion string
	OS, Arch  string
	LoadStart [3]float64
	LoadEnd   [3]float64
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadStart: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// loadAverage reads /proc/loadavg; zeros where there is none.
func loadAverage() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	fmt.Sscan(string(b), &l[0], &l[1], &l[2])
	return l
}

// analysis is section 6: a trace of AnalyzeTotal output tokens, made by
// repeating section 5's real records (new ids, later times, ten phases) with
// the trace writer, then analysed as 'llmreplay analyze' does.
func (h *harness) analysis(ctx context.Context) error {
	if h.sizeTrace == "" {
		if err := h.size(ctx); err != nil {
			return err
		}
	}
	r, err := trace.Open(h.sizeTrace)
	if err != nil {
		return err
	}
	hdr := r.Header()
	r.Close()
	tmpl, err := readTrace(h.sizeTrace)
	if err != nil {
		return err
	}
	per := textTokens(tmpl)
	if per == 0 || len(hdr.Phases) == 0 {
		return errors.New("the trace-size run recorded no tokens to build the analysis trace from")
	}
	const phases = 10
	base := hdr.Phases[0]
	hdr.Phases = nil
	for i := 0; i < phases; i++ {
		ph := base
		ph.Index, ph.Repeat, ph.Name = i, i, fmt.Sprintf("%s#%d", base.Name, i)
		hdr.Phases = append(hdr.Phases, ph)
	}
	path := filepath.Join(h.dir, "analyze.trace.zst")
	h.logf("6. analysis: writing a %d-token trace", h.plan.AnalyzeTotal)
	w, err := trace.Create(path, hdr)
	if err != nil {
		return err
	}
	var span int64
	for _, rec := range tmpl {
		span = max(span, rec.Done)
	}
	span += int64(time.Second)
	row := &AnalysisRow{Run: h.run}
	for round := 0; row.Tokens < int64(h.plan.AnalyzeTotal); round++ {
		shift := int64(round) * span
		for _, t := range tmpl {
			rec := *t
			rec.ID = fmt.Sprintf("%s.%d", t.ID, round)
			rec.Index = row.Requests
			rec.Phase = round % phases
			rec.Chunks = slices.Clone(t.Chunks)
			rec.Shift(shift)
			if err := w.Write(&rec); err != nil {
				w.Close()
				return err
			}
			row.Requests++
			row.Tokens += textTokens([]*trace.Record{t})
		}
		if err := ctx.Err(); err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		row.FileBytes = st.Size()
	}
	tmpl = nil

	h.logf("6. analysis: analysing %d tokens in %d requests", row.Tokens, row.Requests)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap := ms.HeapInuse
	stop := make(chan struct{})
	peak := make(chan [2]uint64)
	go func() {
		var hi, sys uint64
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > hi {
				hi, sys = m.HeapInuse, m.Sys
			}
			select {
			case <-stop:
				peak <- [2]uint64{hi, sys}
				return
			case <-tk.C:
			}
		}
	}()
	cpu0 := cputime.Process()
	t0 := time.Now()
	ar, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: path})
	if err == nil {
		_, err = render.BuildTable(ar, render.TableOptions{})
	}
	row.Elapsed = time.Since(t0)
	cpu1 := cputime.Process()
	row.CPU = cpu1 - cpu0
	close(stop)
	pk := <-peak
	if err != nil {
		return err
	}
	if pk[0] > baseHeap {
		row.PeakHeap = pk[0] - baseHeap
	}
	row.SysAtPeak = pk[1]
	h.res.Analysis = append(h.res.Analysis, *row)
	return nil
}
