// Package bench is the seeds' benchmark in one call: build the count-up
// workload, replay it against a server (the built-in simulator when no URL
// is given), and turn the trace into the seeds' table. It only composes the
// pipeline's packages (workload → replay → trace → analyze); each keeps
// its one job.
package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/analyze/report"
	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// DefaultProfile is the simulator profile used when no URL is given.
const DefaultProfile = "vllm-rtx5090-bf16"

// Config is one bench run.
type Config struct {
	// Replay holds the endpoint settings (URL, API, model, label,
	// timeouts, salt …). Workload and Trace are filled in by Run.
	Replay replay.Config

	// Workload parameters (the seeds' defaults when zero).
	Concurrency []int // default 1, 4, 8, 16
	InputTokens []int // default 800
	MaxTokens   int   // default 256
	Repeats     int   // default DefaultRepeats (6)
	Tokenizer   string
	Shape       workload.Shape

	// Profile is the simulator profile when Replay.URL is empty.
	Profile string
	// Sim tweaks the in-process simulator (faults, slots); its Profile is
	// set from Profile.
	Sim sim.Config

	// Results is the folder for the workload, trace and table files
	// (created if missing; default "results").
	Results string
	// Definitions names the metric definition set for the table.
	Definitions string
	// Now names the files; zero means time.Now().
	Now time.Time
}

// Result is what a bench run produced.
type Result struct {
	Summary   *replay.Summary
	Simulated bool
	Profile   string
	URL       string
	Workload  string // path of the workload file
	Trace     string // path of the trace
	TableFile string // path of the Markdown table
	JSONFile  string // path of the JSON analysis
	// ReportFile is the path of the HTML report (analyze/report).
	ReportFile string
	Table      string // the wide text table (bench --wide)
	// Compact is the summary bench prints by default: one block per
	// concurrency (analyze/render's summary, as analyze prints it).
	Compact  string
	Analysis *analyze.Result
	Warnings []analyze.Warning
}

// Defaults of the concurrency sweep bench runs when a Config leaves them
// zero: the sweep of the source benchmark (see docs/SIMULATOR.md).
var (
	DefaultConcurrency = []int{1, 4, 8, 16}
	DefaultInputTokens = []int{800}
)

const (
	DefaultMaxTokens = 256
	// DefaultRepeats is the workload's burst default: the fewest runs per
	// level for which the median over runs (aggregate tok/s) has a bounded
	// 95% interval, so check gives verdicts on bench's own traces.
	DefaultRepeats = workload.DefaultBurstRepeats
	DefaultResults = trace.ResultsDir
)

// resolved is a Config after its one resolve step: defaults applied, every
// setting checked, the workload built and the simulator profile found, all
// before anything starts or is written.
type resolved struct {
	Config
	wl      *workload.Workload
	profile sim.Profile // when Replay.URL is empty
}

// resolve checks c and applies its defaults; it is the only place either
// happens. Replay's own settings are checked here too (against a
// placeholder address when the simulator's is not known yet), so a bad
// flag is reported before the simulator starts.
func (c Config) resolve() (*resolved, error) {
	if len(c.Concurrency) == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if len(c.InputTokens) == 0 {
		c.InputTokens = DefaultInputTokens
	}
	c.MaxTokens = cmp.Or(c.MaxTokens, DefaultMaxTokens)
	c.Repeats = cmp.Or(c.Repeats, DefaultRepeats)
	c.Results = cmp.Or(c.Results, DefaultResults)
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	for _, n := range c.Concurrency {
		if n < 1 || n > 100000 {
			return nil, fielderr.New("bench: Config", "Concurrency", fmt.Sprintf("%d is out of range", n), "use whole numbers from 1 to 100000")
		}
	}
	levels := make([]string, len(c.Concurrency))
	for i, n := range c.Concurrency {
		levels[i] = strconv.Itoa(n)
	}
	wl, err := workload.Build(workload.BuildConfig{
		Tokenizer:   c.Tokenizer,
		Shape:       c.Shape,
		InputTokens: c.InputTokens,
		MaxTokens:   c.MaxTokens,
		Schedule:    "burst:" + strings.Join(levels, ","),
		Repeats:     c.Repeats,
		Seed:        1,
	})
	if err != nil {
		return nil, err
	}
	r := &resolved{Config: c, wl: wl}
	check := c.Replay
	check.Workload, check.Trace = wl, "unused"
	if c.Replay.URL == "" {
		r.Profile = cmp.Or(r.Profile, DefaultProfile)
		if r.profile, err = sim.LookupProfile(r.Profile); err != nil {
			return nil, err
		}
		check.URL = "http://127.0.0.1:1"
	}
	if _, err := check.Resolve(); err != nil {
		return nil, err
	}
	return r, nil
}

// Check reports whether Run would accept c, without starting or writing
// anything (the CLI calls it before it prints that a run begins).
func (c Config) Check() error {
	_, err := c.resolve()
	return err
}

// Run builds the workload, starts the simulator if needed, replays, and
// analyzes. The returned error means the run could not happen; failed
// requests are in the trace and the table's warnings.
func Run(ctx context.Context, c Config) (*Result, error) {
	r, err := c.resolve()
	if err != nil {
		return nil, err
	}
	cfg, wl := r.Config, r.wl
	res := &Result{}
	rc := cfg.Replay
	if rc.URL == "" {
		p := r.profile
		sc := cfg.Sim
		sc.Profile = p
		sc.Tokenizer = cmp.Or(sc.Tokenizer, wl.Header.Tokenizer)
		srv, err := sim.New(sc)
		if err != nil {
			return nil, err
		}
		if err := srv.Start("127.0.0.1:0"); err != nil {
			return nil, err
		}
		defer srv.Close()
		rc.URL = srv.URL()
		rc.Simulated = true
		rc.SimProfile = p.Name
		rc.Label = cmp.Or(rc.Label, "sim "+p.Name)
		res.Simulated, res.Profile = true, p.Name
	}
	res.URL = replay.RedactURL(rc.URL)

	made := missingFolders(cfg.Results)
	if err := os.MkdirAll(cfg.Results, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the results folder %s: %w", cfg.Results, err)
	}
	// The names are timestamped to the second, so another run started in
	// the same second (or a file already there) may hold them: all five
	// are claimed before anything is written, taking NAME-2, NAME-3, …
	// when any is taken, so that no run ever replaces another's file.
	exts := []string{".workload.zst", ".trace.zst", ".md", ".json", ".report.html"}
	stem, err := outfile.ClaimNumbered(filepath.Join(cfg.Results, trace.RunName(rc.Label, rc.Model, "bench", cfg.Now)), exts...)
	if err != nil {
		removeFolders(made)
		return nil, fmt.Errorf("cannot name the results: %w; choose another --results folder", err)
	}
	res.Workload, res.Trace, res.TableFile, res.JSONFile, res.ReportFile = stem+exts[0], stem+exts[1], stem+exts[2], stem+exts[3], stem+exts[4]
	// Whatever ends the run, a claim no step filled is removed; and when
	// the trace got nothing (the server was never reached), the run
	// measured nothing and leaves nothing: not its workload, not the
	// folders it made.
	defer func() {
		for _, p := range []string{res.Trace, res.TableFile, res.JSONFile, res.ReportFile} {
			if st, err := os.Stat(p); err == nil && st.Size() == 0 {
				os.Remove(p)
			}
		}
		if _, err := os.Stat(res.Trace); err != nil {
			os.Remove(res.Workload)
			removeFolders(made)
		}
	}()
	if err := workload.Create(res.Workload, wl); err != nil {
		return nil, err
	}
	rc.Workload = wl
	rc.Trace = res.Trace
	sum, err := replay.Run(ctx, rc)
	res.Summary = sum
	if err != nil {
		return res, err
	}

	tl, srv := &report.Timelines{}, &report.ServerState{}
	ar, err := analyze.AnalyzeFiles(analyze.Options{Definitions: cfg.Definitions, Records: tl.Add, Scrapes: srv.Add}, analyze.Input{Path: res.Trace})
	if err != nil {
		return res, err
	}
	res.Analysis = ar
	res.Warnings = analyze.AllWarnings(ar, nil)
	t, err := render.BuildTable(ar, render.TableOptions{})
	if err != nil {
		return res, err
	}
	var text, md, js bytes.Buffer
	if err := render.RenderText(&text, t); err != nil {
		return res, err
	}
	res.Table = text.String()
	var compact bytes.Buffer
	if err := render.RenderSummaryText(&compact, render.BuildSummary(ar, render.SummaryOptions{})); err != nil {
		return res, err
	}
	res.Compact = compact.String()
	if err := render.RenderMarkdown(&md, t); err != nil {
		return res, err
	}
	if err := analyze.WriteJSON(&js, analyze.NewDocument(ar, nil)); err != nil {
		return res, err
	}
	if err := atomicfile.WriteFile(res.TableFile, append(header(res, sum), md.Bytes()...)); err != nil {
		return res, err
	}
	if err := atomicfile.WriteFile(res.JSONFile, js.Bytes()); err != nil {
		return res, err
	}
	var page bytes.Buffer
	if err := report.Write(&page, ar, report.Options{Title: "llmreplay bench", When: cfg.Now.UTC().Format(time.RFC3339), Timelines: tl, Server: srv}); err != nil {
		return res, err
	}
	if err := atomicfile.WriteFile(res.ReportFile, page.Bytes()); err != nil {
		return res, err
	}
	return res, nil
}

// missingFolders lists dir and those of its parents that do not exist,
// deepest first: the folders MkdirAll is about to make.
func missingFolders(dir string) []string {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return made
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			return made
		}
	}
}

// removeFolders removes the folders a run made, deepest first, where
// they are still empty.
func removeFolders(made []string) {
	for _, d := range made {
		if os.Remove(d) != nil {
			return
		}
	}
}

// header is the Markdown table file's preamble: what was measured, where.
func header(res *Result, sum *replay.Summary) []byte {
	var b bytes.Buffer
	server := res.URL
	if res.Simulated {
		server = fmt.Sprintf("SIMULATED (llmreplay's built-in simulator, profile %s) at %s", res.Profile, res.URL)
	}
	fmt.Fprintf(&b, "# llmreplay bench\n\n- server: %s\n- model: %s\n- trace: %s\n- workload: %s\n- %s\n\n",
		safetext.Markdown(server), safetext.Markdown(sum.Model), safetext.Markdown(filepath.Base(res.Trace)),
		safetext.Markdown(filepath.Base(res.Workload)), safetext.Markdown(sum.String()))
	return b.Bytes()
}
