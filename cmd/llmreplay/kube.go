package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/kube"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

func newKubeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Write Kubernetes manifests that replay a workload from many pods at once",
		Long: `kube job writes a Kubernetes Indexed Job that runs one llmreplay pod per
shard: each sends its part of the workload (replay --shards N, its index from
the Job) from a common start time and writes its trace to a shared volume.
Merge the traces with 'llmreplay trace merge'. docs/DISTRIBUTED.md has the
whole flow: build the image, apply, wait, copy the traces, merge, analyze.`,
		Example: `  llmreplay kube job sweep.workload.zst --shards 8 --image registry.example/llmreplay:latest \
    --url http://vllm.default.svc:8000 --results-claim llmreplay-results -o job.yaml
  kubectl apply -f job.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown kube subcommand %q: use 'kube job'", args[0])
			}
			return usagef("kube needs a subcommand: 'kube job WORKLOAD ...'")
		},
	}
	cmd.AddCommand(newKubeJobCmd())
	return cmd
}

// kubeFlagOf maps JobConfig's field names, which kube's errors name, to the
// flags that set them.
var kubeFlagOf = map[string]string{
	"Name": "--name", "Namespace": "--namespace", "Image": "--image", "Shards": "--shards",
	"ResultsClaim": "--results-claim", "URL": "--url", "WorkloadClaim": "--workload-claim",
	"WorkloadPath": "--workload-path", "ReplayArg": "replay flags after --", "BackoffLimitPerIndex": "--retries",
	"APIKeySecret": "--api-key-secret", "StartAt": "--start-at", "CPU": "--cpu", "Memory": "--memory", "ResultsPath": "--results-path",
}

func newKubeJobCmd() *cobra.Command {
	var (
		c       kube.JobConfig
		out     string
		startIn time.Duration
		startAt string
		force   bool
	)
	cmd := &cobra.Command{
		Use:   "job WORKLOAD --shards N --image IMAGE --url URL --results-claim PVC [-o job.yaml] [-- REPLAY FLAGS]",
		Short: "Write an Indexed Job (and the workload's ConfigMap) for a sharded replay",
		Long: `Writes YAML for kubectl apply: a ConfigMap holding the workload when it fits
(at most 1 MiB; otherwise name the volume that holds it with --workload-claim
and --workload-path), and a batch/v1 Job with completionMode Indexed,
completions = parallelism = --shards, backoffLimitPerIndex so a failed shard
is retried alone, and per pod: replay --shards N --start-at T, writing
shard-I.trace.zst to the --results-claim volume. Flags after -- go to replay
(--api, --label, --model …). The API key comes from a Secret
(--api-key-secret, key api-key), never from the manifest.`,
		Example: `  llmreplay kube job sweep.workload.zst --shards 8 --image registry.example/llmreplay:latest \
    --url http://vllm.default.svc:8000 --results-claim llmreplay-results -o job.yaml -- --label "vLLM bf16"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wlPath := args[0]
			c.ReplayArg = args[1:]
			if cmd.ArgsLenAtDash() > 1 {
				return usagef("give one workload before --, and replay's flags after it")
			}
			api, err := checkReplayArgs(c.ReplayArg)
			if err != nil {
				return err
			}
			c.API = api
			if err := secretReplayArgs(c.ReplayArg); err != nil {
				return err
			}
			wl, err := workload.Open(wlPath)
			if err != nil {
				return usageError(err)
			}
			c.Workload = wl
			if c.WorkloadClaim == "" {
				data, err := os.ReadFile(wlPath)
				if err != nil {
					return usageError(err)
				}
				if len(data) > kube.ConfigMapLimit {
					return usagef("%s is %d bytes, more than a ConfigMap holds (%d): copy it to a volume and pass --workload-claim and --workload-path", wlPath, len(data), kube.ConfigMapLimit)
				}
				c.WorkloadData = data
			}
			if startAt != "" && cmd.Flags().Changed("start-in") {
				return usagef("--start-at and --start-in both given: use one")
			}
			if startIn < 0 {
				return usagef("--start-in %v is negative: give how long from now the shards start", startIn)
			}
			c.StartAt = time.Now().Add(startIn).Truncate(time.Second)
			if startAt != "" {
				t, err := time.Parse(time.RFC3339, startAt)
				if err != nil {
					return usagef("--start-at %q is not an RFC 3339 time: write it like 2026-12-03T10:00:00Z", startAt)
				}
				c.StartAt = t
			}
			y, err := kube.Manifest(c)
			if err != nil {
				msg := err.Error()
				for field, flag := range kubeFlagOf {
					msg = strings.ReplaceAll(msg, field+" ", flag+" ")
				}
				return usagef("%s", msg)
			}
			if out == "" || out == "-" {
				_, err := cmd.OutOrStdout().Write(y)
				return err
			}
			if err := writeOutput(out, force, []string{wlPath}, func(w io.Writer) error {
				_, err := w.Write(y)
				return err
			}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %d shards start together at %s (apply it before then; a shard that starts late says so in its trace)\n",
				out, c.Shards, c.StartAt.UTC().Format(time.RFC3339))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&c.Name, "name", "llmreplay", "the Job's name (a DNS label)")
	fs.StringVar(&c.Namespace, "namespace", "", "the namespace (default: kubectl's current one)")
	fs.StringVar(&c.Image, "image", "", "the llmreplay container image (build it from the Containerfile) (required)")
	fs.IntVar(&c.Shards, "shards", 0, "pods, each sending one shard of the workload (required)")
	fs.StringVar(&c.URL, "url", "", "the server's base address as the pods reach it (required)")
	fs.StringVar(&c.ResultsClaim, "results-claim", "", "PersistentVolumeClaim the traces are written to, ReadWriteMany (required)")
	fs.StringVar(&c.ResultsPath, "results-path", "", "folder on the results volume (default: its root)")
	fs.StringVar(&c.WorkloadClaim, "workload-claim", "", "PersistentVolumeClaim holding a workload too big for a ConfigMap")
	fs.StringVar(&c.WorkloadPath, "workload-path", "", "the workload's path on --workload-claim")
	fs.StringVar(&c.APIKeySecret, "api-key-secret", "", "a Secret whose key api-key is the API key (sent as OPENAI_API_KEY)")
	fs.StringVar(&c.CPU, "cpu", "2", "CPU each pod requests")
	fs.StringVar(&c.Memory, "memory", "1Gi", "memory each pod requests")
	fs.IntVar(&c.BackoffLimitPerIndex, "retries", 1, "times a failed shard is retried, alone (backoffLimitPerIndex)")
	fs.DurationVar(&startIn, "start-in", 2*time.Minute, "the shards start together this long after the manifest is written")
	fs.StringVar(&startAt, "start-at", "", "the shards start together at this time (RFC 3339) instead")
	fs.StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	fs.BoolVar(&force, "force", false, "replace the output file if it exists")
	return cmd
}

// jobOwnedFlags are the replay flags the Job passes every pod itself: one
// after -- would come later on the pod's command line and win, so the
// shards would reach another server, split the workload another way or
// start apart. Each says where its value belongs instead.
var jobOwnedFlags = []struct{ name, fix string }{
	{"url", "give it to kube job before --"},
	{"shards", "give it to kube job before --"},
	{"shard", "each pod's part comes from its Job index: drop it"},
	{"start-at", "give it to kube job before --"},
	{"start-in", "give it to kube job before --"},
	{"output", "each pod writes shard-I.trace.zst on --results-claim (folder: --results-path): drop it"},
}

// checkReplayArgs parses the flags after -- with replay's own flag set, so
// a typo or a bad value is refused here, before anything is written, not
// in every pod once the Job runs; and it refuses the flags the Job sets.
// It returns the --api the pods will use, for kube to check against the
// workload.
func checkReplayArgs(args []string) (api string, err error) {
	rc := newReplayCmd()
	// As the root does for every command: a flag given twice after --
	// would otherwise pass here and fail in every pod.
	singleValueFlags(rc)
	fs := rc.Flags()
	fs.SetOutput(io.Discard) // the error is returned and said once, below
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return "", usagef("replay flags after --: --help is not a replay flag to send: run 'llmreplay replay --help' to see them")
		}
		return "", usagef("replay flags after --: %v: run 'llmreplay replay --help' for replay's flags", err)
	}
	for _, o := range jobOwnedFlags {
		if fs.Changed(o.name) {
			name := "--" + o.name
			if sh := fs.Lookup(o.name).Shorthand; sh != "" {
				name = "-" + sh + "/--" + o.name
			}
			return "", usagef("%s after --: the Job sets --%s itself, and the pods would take this one instead: %s", name, o.name, o.fix)
		}
	}
	if rest := fs.Args(); len(rest) > 0 {
		return "", usagef("replay flags after -- include %q, which is not a flag: the Job passes the workload itself; give only replay's flags after --", rest[0])
	}
	return fs.Lookup("api").Value.String(), nil // its default when not given: what the pods use
}

// secretReplayArgs refuses replay flags that would write a credential into
// the manifest: a secret --header or an --extra-body holding a secret. The
// API key has its own way in (--api-key-secret); an @FILE extra body is
// read in the pod, so only its path is written.
func secretReplayArgs(args []string) error {
	for i := 0; i < len(args); i++ {
		name, val, inline := strings.Cut(args[i], "=")
		if name != "--header" && name != "--extra-body" {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				continue // replay itself reports the missing value
			}
			i++
			val = args[i]
		}
		switch name {
		case "--header":
			h, v, _ := strings.Cut(val, ":")
			if replay.SecretHeader(strings.TrimSpace(h), strings.TrimSpace(v)) {
				return usagef("--header %s after -- would write a credential into the manifest: put the key in a Secret and pass --api-key-secret (sent as a bearer token)", strings.TrimSpace(h))
			}
		case "--extra-body":
			if !strings.HasPrefix(val, "@") && replay.BodyHasSecret(json.RawMessage(val)) {
				return usagef("--extra-body after -- holds a secret-looking value, which would be written into the manifest: put the body in a file on a volume and pass --extra-body @FILE")
			}
		}
	}
	return nil
}
