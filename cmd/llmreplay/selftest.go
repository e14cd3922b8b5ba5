package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/selftest"
)

// selftestFlagOf names the flags that set selftest.Config's and
// selftest.Outputs' fields.
var selftestFlagOf = map[string]string{"Timestamps": "--timestamps", "Repeats": "--repeat", "FloorWakeups": "--floor-wakeups",
	"Sections": "--section", "Table": "-o", "CPUProfile": "--cpuprofile", "Force": "--force"}

func newSelftestCmd() *cobra.Command {
	var (
		cfg  selftest.Config
		outs selftest.Outputs
	)
	cmd := &cobra.Command{
		Use:   "selftest [--short]",
		Short: "Measure the client itself: CPU per token, streams held, timestamp error, schedule precision, trace size, analysis speed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Check(given(cmd, selftestFlagOf)); err != nil {
				return flagErrorIn(err, selftestFlagOf)
			}
			files, err := outs.Claim()
			if err != nil {
				return flagErrorIn(err, selftestFlagOf)
			}
			defer files.Close()
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find this program's path to start the simulator child: %w", err)
			}
			cfg.Child = []string{exe, "selftest", "sim-child"}
			cfg.Progress = cmd.ErrOrStderr()
			return files.Run(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Short, "short", false, "the CI version: every section at a small scale, a few seconds")
	f.StringVar(&cfg.Dir, "dir", "", "keep the workloads and traces in this folder (default: a temporary one, removed)")
	f.StringVarP(&outs.Table, "output", "o", "", "also write the table to this file")
	f.BoolVar(&outs.Force, "force", false, "replace the -o or --cpuprofile file if it exists")
	f.StringVar(&outs.CPUProfile, "cpuprofile", "", "write a CPU profile of the client (this process) to this file, for go tool pprof")
	f.IntVar(&cfg.Repeats, "repeat", 0, "run every section this many times, for the median and spread (default 3; 1 with --short)")
	f.IntVar(&cfg.FloorWakeups, "floor-wakeups", 0, "wake-ups of the machine-noise measurement before each run, one every 2 ms (default 5000; 250 with --short)")
	f.IntSliceVar(&cfg.Sections, "section", nil, "run only these sections (1-6)")
	f.StringVar(&cfg.Timestamps, "timestamps", replay.TimestampsAuto, "every replay's source of chunk times, as replay's --timestamps (kernel, user, auto); section 3 shows both sources of the same run wherever kernel stamps are on")
	f.BoolVar(&cfg.NormalPriority, "normal-priority", false, "every replay's dispatcher thread stays at the normal scheduling policy, as replay's --normal-priority (to compare with the realtime one it asks for by default)")
	f.DurationVar(&cfg.ScrapeInterval, "server-metrics-interval", 0, "scrape the simulator's /metrics this often during every replay, as replay --server-metrics does, to measure what scraping costs the timestamps (0: no scraping)")
	cmd.AddCommand(&cobra.Command{
		Use:                "sim-child",
		Short:              "The simulator side of selftest (started by selftest itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return selftest.ServeChild(args, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	})
	return cmd
}
