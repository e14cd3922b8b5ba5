package probe

import (
	"context"
	"fmt"
	"io"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
)

// Modes of the prefix-cache probe.
const (
	ModeRepeat       = "repeat"        // PrefixCache
	ModeSharedSystem = "shared-system" // SharedSystem
)

// Settings are a prefix-cache probe as a person asks for it: the mode,
// the repeat mode's Config (whose Tokenizer, InputTokens, MaxTokens and
// Seed the shared-system mode shares), the shared-system mode's own sizes
// (SystemTokens, Rounds, Requests), and the built-in simulator to probe
// when the server has no URL. Check and Run are the one place they are
// checked; errors name the field (fielderr).
type Settings struct {
	Mode    string
	Config  Config
	Shared  SharedConfig
	Profile string // "": sim.DefaultProfile
	NoCache bool   // the simulator without its prefix cache (to see the probe fail)
}

func settingErr(field, format string, args ...any) error {
	return fielderr.Newf("probe: Settings", field, format, args...)
}

// modeOf is the mode each mode's own setting belongs to.
var modeOf = []struct{ field, mode string }{
	{"Repeats", ModeRepeat}, {"Shape", ModeRepeat},
	{"SystemTokens", ModeSharedSystem}, {"Rounds", ModeSharedSystem}, {"Requests", ModeSharedSystem},
}

// Check refuses what the probe cannot run with, before anything starts:
// given says which settings were stated (of the replay settings too: a
// Salt, which would keep the prompts from the cache), url is the server's.
// A stated 0 of a size whose zero means its default is refused.
func (s *Settings) Check(given fielderr.Given, url string) error {
	switch {
	case given.Has("Salt"):
		return settingErr("Salt", "{Salt}: the probe sends its prompts verbatim (a salt would keep them from the cache): drop it")
	case url != "" && (given.Has("Profile") || s.NoCache):
		return settingErr("Profile", "{Profile} and {NoCache} apply to the built-in simulator only: drop them, or drop {URL}")
	case s.Mode != ModeRepeat && s.Mode != ModeSharedSystem:
		return settingErr("Mode", "{Mode} %q: give repeat or shared-system", s.Mode)
	}
	for _, m := range modeOf {
		if given.Has(m.field) && s.Mode != m.mode {
			return settingErr(m.field, "{"+m.field+"} applies to {Mode} %s only: drop it", m.mode)
		}
	}
	c, sh := s.Config, &s.Shared
	if s.Mode == ModeSharedSystem {
		sh.Tokenizer, sh.MaxTokens, sh.Seed = c.Tokenizer, c.MaxTokens, c.Seed
		sh.UserTokens = DefaultUserTokens
		if given.Has("InputTokens") {
			sh.UserTokens = c.InputTokens
		}
		if err := atLeastOne(map[string]int{"Rounds": sh.Rounds, "Requests": sh.Requests, "SystemTokens": sh.SystemTokens}, "Rounds", "Requests", "SystemTokens"); err != nil {
			return err
		}
		if err := sh.Check(); err != nil {
			return err
		}
	}
	if err := atLeastOne(map[string]int{"Repeats": c.Repeats, "MaxTokens": c.MaxTokens, "InputTokens": c.InputTokens}, "Repeats", "MaxTokens", "InputTokens"); err != nil {
		return err
	}
	return c.Check()
}

// atLeastOne refuses the first of fields whose value is 0: a stated 0
// (the defaults are not), which the probe would read as its default.
func atLeastOne(v map[string]int, fields ...string) error {
	for _, f := range fields {
		if v[f] == 0 {
			return settingErr(f, "{"+f+"} 0: give at least 1")
		}
	}
	return nil
}

// Verdict is a finished probe's answer: PASS, FAIL or UNSURE, and why,
// for the caller's exit status.
type Verdict struct{ Status, Why string }

// Run runs the probe against rc's server, or against the built-in
// simulator when rc.URL is empty (said on notes): notes hears the run's
// summary, w the probe's table. An error of the simulator's settings
// names its field.
func (s *Settings) Run(ctx context.Context, rc replay.Config, w, notes io.Writer) (Verdict, error) {
	if rc.URL == "" {
		p, err := sim.LookupProfile(orDefault(s.Profile, sim.DefaultProfile))
		if err != nil {
			return Verdict{}, err
		}
		srv, err := sim.New(sim.Config{Profile: p, Tokenizer: s.Config.Tokenizer, DisablePrefixCache: s.NoCache})
		if err != nil && fielderr.As(err) == nil {
			err = settingErr("Profile", "%v", err)
		}
		if err != nil {
			return Verdict{}, err
		}
		if err := srv.Start("127.0.0.1:0"); err != nil {
			return Verdict{}, err
		}
		defer srv.Close()
		rc.URL, rc.Simulated, rc.SimProfile = srv.URL(), true, p.Name
		cache := "on"
		if s.NoCache {
			cache = "off"
		}
		fmt.Fprintf(notes, "no --url: using llmreplay's SIMULATED server, profile %s, prefix cache %s\n", p.Name, cache)
	}
	rc.AnnounceAPI(notes)
	var (
		sum    *replay.Summary
		render func(io.Writer) error
		v      Verdict
		err    error
	)
	if s.Mode == ModeSharedSystem {
		s.Shared.Replay = rc
		var res *SharedResult
		if res, err = SharedSystem(ctx, s.Shared); res != nil {
			sum, render, v = res.Summary, res.Render, Verdict{res.Verdict, "the rounds could not be judged: see the evidence"}
			if v.Status == "FAIL" {
				v.Why = "requests after the first round missed the shared system prompt"
			}
		}
	} else {
		s.Config.Replay = rc
		var res *Result
		if res, err = PrefixCache(ctx, s.Config); res != nil {
			sum, render, v = res.Summary, res.Render, Verdict{res.Verdict, "a step could not be judged: see its evidence"}
			if v.Status == "FAIL" {
				v.Why = "the prefix cache did not behave: a step failed"
			}
		}
	}
	if sum != nil {
		fmt.Fprintln(notes, sum)
	}
	if err != nil {
		return Verdict{}, err
	}
	return v, render(w)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
