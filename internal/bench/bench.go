// Package bench is the seeds' benchmark in one call: build the count-up
// workload, replay it against a server (the built-in simulator when no URL
// is given), and turn the trace into the seeds' table. It only composes the
// pipeline's packages (workload → replay → trace → analyze); each keeps
// its one job.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/sim"
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
	Repeats     int   // default 3
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
	Table     string // the text table, as printed
	Analysis  *analyze.Result
	Warnings  []analyze.Warning
}

// Run builds the workload, starts the simulator if needed, replays, and
// analyzes. The returned error means the run could not happen; failed
// requests are in the trace and the table's warnings.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if len(cfg.Concurrency) == 0 {
		cfg.Concurrency = []int{1, 4, 8, 16}
	}
	if len(cfg.InputTokens) == 0 {
		cfg.InputTokens = []int{800}
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = 256
	}
	if cfg.Repeats == 0 {
		cfg.Repeats = 3
	}
	if cfg.Results == "" {
		cfg.Results = "results"
	}
	if cfg.Now.IsZero() {
		cfg.Now = time.Now()
	}
	for _, c := range cfg.Concurrency {
		if c < 1 || c > 100000 {
			return nil, fielderr.New("bench: Config", "Concurrency", fmt.Sprintf("%d is out of range", c), "use whole numbers from 1 to 100000")
		}
	}
	levels := make([]string, len(cfg.Concurrency))
	for i, c := range cfg.Concurrency {
		levels[i] = strconv.Itoa(c)
	}
	wl, err := workload.Build(workload.BuildConfig{
		Tokenizer:   cfg.Tokenizer,
		Shape:       cfg.Shape,
		InputTokens: cfg.InputTokens,
		MaxTokens:   cfg.MaxTokens,
		Schedule:    "burst:" + strings.Join(levels, ","),
		Repeats:     cfg.Repeats,
		Seed:        1,
	})
	if err != nil {
		return nil, err
	}

	res := &Result{}
	rc := cfg.Replay
	if rc.URL == "" {
		if cfg.Profile == "" {
			cfg.Profile = DefaultProfile
		}
		p, err := sim.LookupProfile(cfg.Profile)
		if err != nil {
			return nil, err
		}
		sc := cfg.Sim
		sc.Profile = p
		if sc.Tokenizer == "" {
			sc.Tokenizer = wl.Header.Tokenizer
		}
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
		if rc.Label == "" {
			rc.Label = "sim " + p.Name
		}
		res.Simulated, res.Profile = true, p.Name
	}
	res.URL = replay.RedactURL(rc.URL)

	if err := os.MkdirAll(cfg.Results, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the results folder %s: %w", cfg.Results, err)
	}
	name := trace.RunName(rc.Label, rc.Model, "bench", cfg.Now)
	res.Workload = filepath.Join(cfg.Results, name+".workload.zst")
	res.Trace = filepath.Join(cfg.Results, name+".trace.zst")
	res.TableFile = filepath.Join(cfg.Results, name+".md")
	res.JSONFile = filepath.Join(cfg.Results, name+".json")
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

	ar, err := analyze.AnalyzeFiles(analyze.Options{Definitions: cfg.Definitions}, analyze.Input{Path: res.Trace})
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
	return res, nil
}

// header is the Markdown table file's preamble: what was measured, where.
func header(res *Result, sum *replay.Summary) []byte {
	var b bytes.Buffer
	server := res.URL
	if res.Simulated {
		server = fmt.Sprintf("SIMULATED (llmreplay's built-in simulator, profile %s) at %s", res.Profile, res.URL)
	}
	fmt.Fprintf(&b, "# llmreplay bench\n\n- server: %s\n- model: %s\n- trace: %s\n- workload: %s\n- %s\n\n",
		server, sum.Model, filepath.Base(res.Trace), filepath.Base(res.Workload), sum)
	return b.Bytes()
}
