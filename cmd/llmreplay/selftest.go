package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/pprof"
	"slices"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/selftest"
)

func newSelftestCmd() *cobra.Command {
	var (
		cfg        selftest.Config
		out        string
		force      bool
		cpuprofile string
		sections   []int
	)
	cmd := &cobra.Command{
		Use:     "selftest [--short]",
		Short:   "Measure the client itself: CPU per token, streams held, timestamp error, schedule precision, trace size, analysis speed",
		Long:    helpText("selftest"),
		Example: helpText("selftest.example"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch cfg.Timestamps {
			case replay.TimestampsAuto, replay.TimestampsKernel, replay.TimestampsUser:
			default:
				return usagef("--timestamps %q: use kernel, user or auto", cfg.Timestamps)
			}
			// selftest.Config reads 0 runs as its default; a user typing
			// --repeat 0 does not mean "3", so a given 0 is refused too.
			if cfg.Repeats < 0 || (cfg.Repeats == 0 && cmd.Flags().Changed("repeat")) {
				return usagef("--repeat %d: give 1 or more runs, or leave --repeat out for the default (3; 1 with --short)", cfg.Repeats)
			}
			if cfg.FloorWakeups < 0 {
				return usagef("--floor-wakeups %d: give 1 or more wake-ups (0 means the default)", cfg.FloorWakeups)
			}
			for _, s := range sections {
				if s < 1 || s > 6 {
					return usagef("--section %d: sections are numbered 1 to 6", s)
				}
			}
			// Before ten minutes of measuring, not after: an output that
			// cannot or must not be written is known now.
			if err := checkFolder("--dir", cfg.Dir); err != nil {
				return err
			}
			if out != "" {
				if err := checkOutFolder(out); err != nil {
					return err
				}
				if err := outfile.Check(out, force); err != nil {
					return usageError(err)
				}
				// Held from now until the table is written over it, so a
				// second selftest started meanwhile with the same -o is
				// refused instead of having its table replaced at the end.
				release, err := claimOut("-o", out)
				if err != nil {
					return err
				}
				defer release()
			}
			// The profile is written to a temporary file beside it and
			// renamed into place only when the run ends well: an existing
			// file is replaced only with --force, and a failed or stopped
			// run leaves no half profile.
			var prof *atomicfile.File
			if cpuprofile != "" {
				if cpuprofile == out {
					return usagef("--cpuprofile %s: it is also the -o file; give the profile another name", cpuprofile)
				}
				if err := outfile.Check(cpuprofile, force); err != nil {
					return usagef("--cpuprofile: %v", err)
				}
				release, err := claimOut("--cpuprofile", cpuprofile)
				if err != nil {
					return err
				}
				defer release()
				f, err := atomicfile.Create(cpuprofile)
				if err != nil {
					return usagef("--cpuprofile: %v", err)
				}
				prof = f
				defer prof.Abort()
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find this program's path to start the simulator child: %w", err)
			}
			cfg.Child = []string{exe, "selftest", "sim-child"}
			cfg.Progress = cmd.ErrOrStderr()
			cfg.Sections = slices.Clone(sections)
			if prof != nil {
				// The simulator runs in the child, so this profiles the client alone.
				if err := pprof.StartCPUProfile(prof); err != nil {
					return err
				}
			}
			res, err := selftest.Run(cmd.Context(), cfg)
			if prof != nil {
				pprof.StopCPUProfile()
			}
			if err != nil {
				return err
			}
			if prof != nil {
				if err := prof.Commit(); err != nil {
					return err
				}
			}
			if err := res.WriteTable(cmd.OutOrStdout()); err != nil {
				return err
			}
			if out != "" {
				var b bytes.Buffer
				res.WriteTable(&b)
				return atomicfile.WriteFile(out, b.Bytes())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Short, "short", false, "the CI version: every section at a small scale, a few seconds")
	f.StringVar(&cfg.Dir, "dir", "", "keep the workloads and traces in this folder (default: a temporary one, removed)")
	f.StringVarP(&out, "output", "o", "", "also write the table to this file")
	f.BoolVar(&force, "force", false, "replace the -o or --cpuprofile file if it exists")
	f.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the client (this process) to this file, for go tool pprof")
	f.IntVar(&cfg.Repeats, "repeat", 0, "run every section this many times, for the median and spread (default 3; 1 with --short)")
	f.IntVar(&cfg.FloorWakeups, "floor-wakeups", 0, "wake-ups of the machine-noise measurement before each run, one every 2 ms (default 5000; 250 with --short)")
	f.IntSliceVar(&sections, "section", nil, "run only these sections (1-6)")
	f.StringVar(&cfg.Timestamps, "timestamps", replay.TimestampsAuto, "every replay's source of chunk times, as replay's --timestamps (kernel, user, auto); section 3 shows both sources of the same run wherever kernel stamps are on")
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

// claimOut holds a path that outfile.Check found free (or --force lets
// replace) until the run renames its file over it (outfile.Hold); if
// another run took it since the check, that is the same bad input as a
// file there before.
func claimOut(flag, path string) (release func(), err error) {
	release, err = outfile.Hold(path)
	if errors.Is(err, fs.ErrExist) {
		return nil, usagef("%s %s: the file exists (another run has just claimed it); choose another name, or add --force to replace it", flag, path)
	} else if err != nil {
		return nil, usagef("%s %s: %v", flag, path, err)
	}
	return release, nil
}
