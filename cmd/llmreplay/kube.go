package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/kube"
)

func newKubeCmd() *cobra.Command {
	cmd := group("kube", "Write Kubernetes manifests that replay a workload from many pods at once", newKubeJobCmd())
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cli.Usagef("unknown kube subcommand %q: use 'kube job'", args[0])
		}
		return cli.Usagef("kube needs a subcommand: 'kube job WORKLOAD ...'")
	}
	return cmd
}

func newKubeJobCmd() *cobra.Command {
	var (
		c            kube.JobConfig
		out, startAt string
		startIn      time.Duration
		force        bool
	)
	cmd := &cobra.Command{
		Use:   "job WORKLOAD --shards N --image IMAGE --url URL --results-claim PVC [-o job.yaml] [-- REPLAY FLAGS]",
		Short: "Write an Indexed Job (and the workload's ConfigMap) for a sharded replay",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c.ReplayArg = args[1:]
			if cmd.ArgsLenAtDash() > 1 {
				return cli.Usagef("give one workload before --, and replay's flags after it")
			}
			var err error
			if c.API, err = checkReplayArgs(c.ReplayArg); err != nil {
				return err
			}
			if err := kube.CheckSecrets(c.ReplayArg); err != nil {
				return flagErrorIn(err, kube.FlagOf)
			}
			if err := c.Load(args[0]); err != nil {
				return cli.Usage(flagErrorIn(err, kube.FlagOf))
			}
			if err := c.SetStart(startAt, startIn, cmd.Flags().Changed("start-in"), time.Now()); err != nil {
				return flagErrorIn(err, kube.FlagOf)
			}
			y, err := kube.Manifest(c)
			if err != nil {
				return cli.Usage(flagErrorIn(err, kube.FlagOf))
			}
			if out == "" || out == "-" {
				_, err := cmd.OutOrStdout().Write(y)
				return err
			}
			if err := writeOutput(out, force, args[:1], func(w io.Writer) error { _, err := w.Write(y); return err }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %d shards start together at %s (apply it before then; a shard that starts late says so in its trace)\n",
				out, c.Shards, c.StartAt.UTC().Format(time.RFC3339))
			return nil
		},
	}
	fs := cmd.Flags()
	c.RegisterFlags(fs)
	fs.DurationVar(&startIn, "start-in", 2*time.Minute, "the shards start together this long after the manifest is written")
	fs.StringVar(&startAt, "start-at", "", "the shards start together at this time (RFC 3339) instead")
	fs.StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	fs.BoolVar(&force, "force", false, "replace the output file if it exists")
	return cmd
}

// checkReplayArgs parses the flags after -- with replay's own flag set, so
// a typo or a bad value is refused here, before anything is written, not
// in every pod once the Job runs; and it refuses the flags the Job sets
// (kube.JobFlags). It returns the --api the pods will use, for kube to
// check against the workload.
func checkReplayArgs(args []string) (api string, err error) {
	rc := newReplayCmd()
	cli.SingleValueFlags(rc) // as the root does: a flag given twice would fail in every pod
	fs := rc.Flags()
	fs.SetOutput(io.Discard) // the error is returned and said once, below
	fs.Usage = func() {}
	if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
		return "", cli.Usagef("replay flags after --: --help is not a replay flag to send: run 'llmreplay replay --help' to see them")
	} else if err != nil {
		return "", cli.Usagef("replay flags after --: %v: run 'llmreplay replay --help' for replay's flags", err)
	}
	for _, o := range kube.JobFlags {
		if fs.Changed(o.Name) {
			name := "--" + o.Name
			if sh := fs.Lookup(o.Name).Shorthand; sh != "" {
				name = "-" + sh + "/--" + o.Name
			}
			return "", cli.Usagef("%s after --: the Job sets --%s itself, and the pods would take this one instead: %s", name, o.Name, o.Fix)
		}
	}
	if rest := fs.Args(); len(rest) > 0 {
		return "", cli.Usagef("replay flags after -- include %q, which is not a flag: the Job passes the workload itself; give only replay's flags after --", rest[0])
	}
	return fs.Lookup("api").Value.String(), nil // its default when not given: what the pods use
}
