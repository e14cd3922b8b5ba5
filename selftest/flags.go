package selftest

import (
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/replay"
)

// FlagOf names the flag that sets each Config and Outputs field
// (RegisterFlags'), for a command line to say the errors, which name the
// fields, in its words.
var FlagOf = map[string]string{"Short": "--short", "Dir": "--dir", "Repeats": "--repeat", "FloorWakeups": "--floor-wakeups",
	"Sections": "--section", "Timestamps": "--timestamps", "NormalPriority": "--normal-priority", "ScrapeInterval": "--server-metrics-interval",
	"Table": "-o", "CPUProfile": "--cpuprofile", "Force": "--force"}

// RegisterFlags binds c's settings to flags of fs, 'llmreplay
// selftest's flags for what it measures: each setting's flag, default
// and help live here, beside the field (Check checks the values).
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.Short, "short", false, "the CI version: every section at a small scale, a few seconds")
	fs.StringVar(&c.Dir, "dir", "", "keep the workloads and traces in this folder (default: a temporary one, removed)")
	fs.IntVar(&c.Repeats, "repeat", 0, "run every section this many times, for the median and spread (default 3; 1 with --short)")
	fs.IntVar(&c.FloorWakeups, "floor-wakeups", 0, "wake-ups of the machine-noise measurement before each run, one every 2 ms (default 5000; 250 with --short)")
	fs.IntSliceVar(&c.Sections, "section", nil, "run only these sections (1-6)")
	fs.StringVar(&c.Timestamps, "timestamps", replay.TimestampsAuto, "every replay's source of chunk times, as replay's --timestamps (kernel, user, auto); section 3 shows both sources of the same run wherever kernel stamps are on")
	fs.BoolVar(&c.NormalPriority, "normal-priority", false, "every replay's dispatcher thread stays at the normal scheduling policy, as replay's --normal-priority (to compare with the realtime one it asks for by default)")
	fs.DurationVar(&c.ScrapeInterval, "server-metrics-interval", 0, "scrape the simulator's /metrics this often during every replay, as replay --server-metrics does, to measure what scraping costs the timestamps (0: no scraping)")
}

// RegisterFlags binds o's files to flags of fs, 'llmreplay selftest's
// flags for what it writes (Claim checks them).
func (o *Outputs) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Table, "output", "o", "", "also write the table to this file")
	fs.BoolVar(&o.Force, "force", false, "replace the -o or --cpuprofile file if it exists")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the client (this process) to this file, for go tool pprof")
}
