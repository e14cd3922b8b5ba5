package main

import (
	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/sim"
)

func newSimCmd() *cobra.Command {
	var (
		addr, profile string
		timeScale     float64
		list          bool
		cfg           sim.Config
	)
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve a simulated inference server (every API replay speaks) until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				sim.WriteProfiles(cmd.OutOrStdout())
				return nil
			}
			s, err := sim.Prepare(cfg, addr, profile, timeScale)
			if err != nil {
				return flagErrorIn(cli.Usage(err), map[string]string{"Addr": "--addr"})
			}
			return s.Serve(cmd.Context(), addr, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&profile, "profile", sim.DefaultProfile, "engine profile (see --list)")
	f.BoolVar(&list, "list", false, "list the profiles with their parameters and exit")
	f.Float64Var(&timeScale, "time-scale", 1, "multiply every duration of the profile by this factor (0.1: ten times faster; compare against latency bounds scaled alike)")
	cfg.RegisterFlags(f)
	return cmd
}
