// Package progress shows how a replay is going while it runs: the current
// phase, requests done and failed, output tok/s and the time left. On a
// terminal it is a live bar (github.com/vbauerster/mpb) redrawn several
// times a second whether or not a request finished; elsewhere (a pipe, a
// CI log) it writes plain lines: one when each phase ends and one every
// Interval while a phase runs. After Ctrl-C it counts down the grace period
// in-flight requests have left.
//
// It reads only what the run reports: each phase's start (Phase) and each
// finished record (Record); it never touches the run's timing path beyond
// a counter update under a mutex.
package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// DefaultInterval is how often plain mode writes a line while a phase runs.
const DefaultInterval = 10 * time.Second

// Options configure a Display.
type Options struct {
	// W is where the display goes (the command's stderr).
	W io.Writer
	// Terminal draws a live bar; false writes plain lines.
	Terminal bool
	// Interval is plain mode's period (0: DefaultInterval).
	Interval time.Duration
	// Grace is how long in-flight requests may finish after Stop: the
	// display counts it down.
	Grace time.Duration
}

// Display is one run's progress. Its methods are safe for concurrent use;
// a nil *Display does nothing (quiet mode).
type Display struct {
	o   Options
	now func() time.Time

	mu        sync.Mutex
	phases    []workload.Phase
	pos       map[int]int // phase Index → position in phases
	stats     []phaseStat // by position
	cur       int         // position of the phase running; -1 before the first
	total     int         // requests planned in all phases
	runStart  time.Time
	done      int // measured requests finished in the run
	failed    int
	stoppedAt time.Time

	bar     *mpb.Bar
	prog    *mpb.Progress
	quit    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.Once
}

// phaseStat counts one phase's finished requests. Records reach the
// display after the engine may have started the next phase (they pass
// through the trace writer first), so they are counted by their own phase,
// not the current one, and a phase's line is written when its last
// request is counted.
type phaseStat struct {
	started     bool
	start, last time.Time
	done        int
	failed      int
	tokens      int // output tokens (per-chunk counts, else chunks)
	written     bool
}

// New starts a display; ctx ending (Ctrl-C) switches it to the grace
// countdown. Close ends it.
func New(ctx context.Context, o Options) *Display {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	d := &Display{o: o, now: time.Now, cur: -1, quit: make(chan struct{})}
	d.runStart = d.now()
	if o.Terminal {
		// Terminal is the caller's decision (it knows the file); mpb is
		// told so rather than asked to guess from a writer.
		d.prog = mpb.New(mpb.WithOutput(o.W), mpb.ForceTTY(), mpb.WithAutoRefresh(), mpb.WithRefreshRate(250*time.Millisecond))
		d.bar = d.prog.AddBar(0, mpb.BarWidth(24),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return d.left() })),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return d.right() })),
		)
	}
	d.wg.Add(1)
	go d.loop(ctx)
	return d
}

// Phase says the run started phases[i] (the run's whole phase list, so the
// display knows how many requests are planned).
func (d *Display) Phase(i int, phases []workload.Phase) {
	if d == nil {
		return
	}
	d.mu.Lock()
	setTotal := d.phases == nil
	if setTotal {
		d.phases = phases
		d.stats = make([]phaseStat, len(phases))
		d.pos = make(map[int]int, len(phases))
		for j, p := range phases {
			d.total += p.Requests
			d.pos[p.Index] = j
		}
	}
	total := d.total
	if i >= 0 && i < len(d.stats) {
		d.cur = i
		d.stats[i].started = true
		d.stats[i].start = d.now()
		if d.phases[i].Requests == 0 {
			d.writePhaseLocked(i) // nothing to wait for (a --duration shorter than its first arrival)
		}
	}
	d.mu.Unlock()
	// The bar is told outside the lock: its redraw calls the decorators,
	// which take the lock.
	if setTotal && d.bar != nil {
		d.bar.SetTotal(int64(total), false)
	}
}

// Record counts a finished request (warm-up requests are not counted).
func (d *Display) Record(r *trace.Record) {
	if d == nil || r.Warmup {
		return
	}
	tokens := outputTokens(r)
	d.mu.Lock()
	d.done++
	if r.Error != nil {
		d.failed++
	}
	if j, ok := d.pos[r.Phase]; ok {
		st := &d.stats[j]
		st.done++
		st.tokens += tokens
		st.last = d.now()
		if r.Error != nil {
			st.failed++
		}
		if st.done >= d.phases[j].Requests {
			d.writePhaseLocked(j)
		}
	}
	done := d.done
	d.mu.Unlock()
	if d.bar != nil {
		d.bar.SetCurrent(int64(done))
	}
}

// outputTokens is a progress display's token count: the server's per-chunk
// counts where it sends them, else one per streamed chunk with text (most
// servers stream one token per chunk). The analysis counts exactly; this is
// only an indicator.
func outputTokens(r *trace.Record) int {
	n := 0
	for _, c := range r.Chunks {
		switch {
		case c.Tokens > 0:
			n += c.Tokens
		case c.Text != "" || c.Reasoning != "":
			n++
		}
	}
	return n
}

// Close ends the display: plain mode writes the last phase's line, the bar
// is drawn a last time and left on the screen.
func (d *Display) Close() {
	if d == nil {
		return
	}
	d.closeMu.Do(func() {
		close(d.quit)
		d.wg.Wait()
		d.mu.Lock()
		// Phases cut short (Ctrl-C, a full disk) get their line too.
		for j := range d.stats {
			if d.stats[j].started {
				d.writePhaseLocked(j)
			}
		}
		whole := d.total > 0 && d.done >= d.total
		total := d.total
		d.mu.Unlock()
		if d.bar != nil {
			// A whole run completes the bar; a stopped one leaves it where
			// it stopped.
			if whole {
				d.bar.SetTotal(int64(total), true)
			} else {
				d.bar.Abort(false)
			}
			d.prog.Wait()
		}
	})
}

func (d *Display) loop(ctx context.Context) {
	defer d.wg.Done()
	tick := time.NewTicker(d.o.Interval)
	defer tick.Stop()
	done := ctx.Done()
	var graceOver <-chan time.Time
	for {
		select {
		case <-d.quit:
			return
		case <-done:
			done = nil
			d.mu.Lock()
			d.stoppedAt = d.now()
			if !d.o.Terminal {
				fmt.Fprintf(d.o.W, "stopping: %s\n", d.graceText())
			}
			if !d.o.Terminal && d.o.Grace > 0 {
				t := time.NewTimer(d.o.Grace)
				defer t.Stop()
				graceOver = t.C
			}
			d.mu.Unlock()
		case <-graceOver:
			graceOver = nil
			d.mu.Lock()
			fmt.Fprintf(d.o.W, "stopping: %s\n", d.graceText())
			d.mu.Unlock()
		case <-tick.C:
			if d.o.Terminal {
				continue // the bar redraws itself
			}
			d.mu.Lock()
			if d.cur >= 0 {
				fmt.Fprintf(d.o.W, "  %s\n", d.statusLocked())
			}
			d.mu.Unlock()
		}
	}
}

// writePhaseLocked writes plain mode's line for phase j once: when its
// last request was counted, or at Close for a phase cut short.
func (d *Display) writePhaseLocked(j int) {
	st := &d.stats[j]
	if d.o.Terminal || st.written {
		return
	}
	st.written = true
	p := d.phases[j]
	el := st.last.Sub(st.start)
	if st.last.IsZero() {
		el = 0
	}
	fmt.Fprintf(d.o.W, "phase %d/%d %s: %d of %d done, %d failed, %s tok/s in %s\n",
		j+1, len(d.phases), p.Name, st.done, p.Requests, st.failed, rate(st.tokens, el), round(el))
}

// statusLocked is the one-line state of the run for plain mode.
func (d *Display) statusLocked() string {
	p, st := d.phases[d.cur], d.stats[d.cur]
	return fmt.Sprintf("phase %d/%d %s: %d of %d done, %d failed, %s; run %d of %d done, %d failed, %s",
		d.cur+1, len(d.phases), p.Name, st.done, p.Requests, st.failed, d.tpsLocked(), d.done, d.total, d.failed, d.etaLocked())
}

// left and right are the bar's decorators, computed at every redraw.
func (d *Display) left() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur < 0 || d.cur >= len(d.phases) {
		return "starting"
	}
	return fmt.Sprintf("phase %d/%d %s", d.cur+1, len(d.phases), d.phases[d.cur].Name)
}

func (d *Display) right() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stoppedAt.IsZero() {
		// Said first: a narrow terminal cuts the end of the line.
		left := "grace over, cutting"
		if g := d.o.Grace - d.now().Sub(d.stoppedAt); g > 0 {
			left = round(g).String() + " grace left"
		}
		return fmt.Sprintf("stopping: %s, %d/%d done, %d failed", left, d.done, d.total, d.failed)
	}
	return fmt.Sprintf("%d/%d done, %d failed, %s, %s", d.done, d.total, d.failed, d.tpsLocked(), d.etaLocked())
}

// tpsLocked is the output rate shown live: the current phase's while its
// requests finish, else that of the last phase with finished requests
// (named), since a burst's requests all finish at its end and a phase
// with none finished yet has no rate to show.
func (d *Display) tpsLocked() string {
	j := d.cur
	for j >= 0 && j < len(d.stats) && d.stats[j].done == 0 {
		j--
	}
	if j < 0 || j >= len(d.stats) {
		return "— tok/s"
	}
	st := d.stats[j]
	if j == d.cur {
		return rate(st.tokens, d.now().Sub(st.start)) + " tok/s"
	}
	return fmt.Sprintf("%s tok/s (phase %d)", rate(st.tokens, st.last.Sub(st.start)), j+1)
}

// etaLocked estimates the time left from the run's average pace so far.
func (d *Display) etaLocked() string {
	if d.done == 0 || d.total <= d.done {
		return "ETA —"
	}
	el := d.now().Sub(d.runStart)
	left := time.Duration(float64(el) * float64(d.total-d.done) / float64(d.done))
	return "ETA " + round(left).String()
}

// graceText says how much of the grace period in-flight requests have left.
func (d *Display) graceText() string {
	left := d.o.Grace - d.now().Sub(d.stoppedAt)
	if left <= 0 {
		return "grace over, cutting in-flight requests"
	}
	return fmt.Sprintf("in-flight requests may finish for %s more (grace %s), then are cut", round(left), d.o.Grace)
}

func rate(tokens int, el time.Duration) string {
	if el <= 0 {
		return "0"
	}
	v := float64(tokens) / el.Seconds()
	if v >= 100 {
		return strings.TrimSuffix(fmt.Sprintf("%.0f", v), ".")
	}
	return fmt.Sprintf("%.1f", v)
}

func round(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
