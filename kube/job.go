// Package kube writes the Kubernetes objects that run a sharded replay as
// an Indexed Job: one pod per shard, each sending its part of the workload
// from a common start time and writing its trace to a shared volume, to be
// joined afterwards by `llmreplay trace merge` (docs/DISTRIBUTED.md).
//
// The manifests are written from plain maps and turned into YAML by
// sigs.k8s.io/yaml, not from k8s.io/api's Go types: those types would pull
// the Kubernetes API machinery into every llmreplay binary for one command.
// The tests decode the output strictly into k8s.io/api's batch/v1 Job and
// core/v1 ConfigMap (unknown fields are errors), so a field this package
// misspells fails the tests rather than a user's kubectl apply.
package kube

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// ConfigMapLimit is the most workload bytes put in a ConfigMap: Kubernetes
// refuses a ConfigMap whose data exceed 1 MiB, and the object's own fields
// need a little room.
const ConfigMapLimit = 1<<20 - 16<<10

// Mount points inside the pod.
const (
	workloadDir = "/workload"
	resultsDir  = "/results"
)

// JobConfig describes the Job to write. Fields name what they are; the CLI
// maps its flags onto them.
type JobConfig struct {
	Name      string // Job name (and the ConfigMap's, with "-workload"); a DNS-1123 label
	Namespace string // "" leaves it to kubectl's context
	Image     string // the llmreplay image (see the Containerfile)
	Shards    int    // pods, each one shard

	// The workload travels in a ConfigMap when it is at most
	// ConfigMapLimit bytes (WorkloadData set); otherwise it must already be
	// on a volume: WorkloadClaim names the PersistentVolumeClaim and
	// WorkloadPath the file on it.
	WorkloadData  []byte
	WorkloadClaim string
	WorkloadPath  string

	// ResultsClaim is the PersistentVolumeClaim the traces are written to,
	// one file per index: shard-I.trace.zst under ResultsPath. It must be
	// writable from every node the pods may land on (ReadWriteMany), or
	// the pods must share one node.
	ResultsClaim string
	ResultsPath  string // a folder on the claim; "" for its root

	URL       string   // the server's base address, as replay --url takes it
	ReplayArg []string // further replay flags (--api, --label, --model …)
	// APIKeySecret names a Secret whose key "api-key" becomes the pods'
	// OPENAI_API_KEY, so the key is never written in the manifest.
	APIKeySecret string

	StartAt time.Time // the common start every shard waits for

	CPU, Memory          string // resource requests, e.g. "2" and "1Gi"
	BackoffLimitPerIndex int    // retries of one failed shard, alone
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Validate checks cfg; errors name the field.
func (c *JobConfig) Validate() error {
	var errs []error
	if !dnsLabel.MatchString(c.Name) || len(c.Name) > 50 {
		errs = append(errs, fmt.Errorf("Name %q is not a lower-case DNS label of at most 50 characters (a-z, 0-9, -)", c.Name))
	}
	if c.Namespace != "" && !dnsLabel.MatchString(c.Namespace) {
		errs = append(errs, fmt.Errorf("Namespace %q is not a DNS label", c.Namespace))
	}
	if c.Image == "" {
		errs = append(errs, errors.New("Image is required: the llmreplay image to run (build it from the Containerfile)"))
	}
	if c.Shards < 1 || c.Shards > 10_000 {
		errs = append(errs, fmt.Errorf("Shards %d is not from 1 to 10000", c.Shards))
	}
	switch {
	case c.WorkloadData != nil && c.WorkloadClaim != "":
		errs = append(errs, errors.New("WorkloadData and WorkloadClaim both set: the workload travels one way"))
	case c.WorkloadData != nil && len(c.WorkloadData) > ConfigMapLimit:
		errs = append(errs, fmt.Errorf("the workload is %d bytes, more than a ConfigMap holds (%d): put it on a volume and set WorkloadClaim and WorkloadPath", len(c.WorkloadData), ConfigMapLimit))
	case c.WorkloadData == nil && (c.WorkloadClaim == "" || c.WorkloadPath == ""):
		errs = append(errs, errors.New("no workload: set WorkloadData, or WorkloadClaim and WorkloadPath"))
	}
	if c.ResultsClaim == "" {
		errs = append(errs, errors.New("ResultsClaim is required: the PersistentVolumeClaim the shards write their traces to"))
	}
	if c.URL == "" {
		errs = append(errs, errors.New("URL is required: the server's base address as the pods reach it"))
	}
	if c.StartAt.IsZero() {
		errs = append(errs, errors.New("StartAt is required: the common start time"))
	}
	if c.BackoffLimitPerIndex < 0 {
		errs = append(errs, fmt.Errorf("BackoffLimitPerIndex %d is negative", c.BackoffLimitPerIndex))
	}
	for _, a := range c.ReplayArg {
		for _, owned := range []string{"--shard", "--shards", "--start-at", "--start-in", "-o", "--output"} {
			if a == owned || strings.HasPrefix(a, owned+"=") {
				errs = append(errs, fmt.Errorf("ReplayArg %q: the Job sets %s itself", a, owned))
			}
		}
	}
	return errors.Join(errs...)
}

// configMapKey is the workload's key in its ConfigMap, fixed because keys
// allow fewer characters than file names.
const configMapKey = "workload.zst"

// workloadFile is where the pods read the workload.
func (c *JobConfig) workloadFile() string {
	if c.WorkloadData != nil {
		return path.Join(workloadDir, configMapKey)
	}
	return path.Join(workloadDir, c.WorkloadPath)
}

// TracePath is the trace shard I writes, as seen in the pod; the same file
// is ResultsPath/shard-I.trace.zst on the claim.
func TracePath(resultsPath string, i int) string {
	return path.Join(resultsDir, resultsPath, "shard-"+strconv.Itoa(i)+".trace.zst")
}

// Manifest returns the YAML documents to apply: the workload ConfigMap (when
// the workload travels in one) and the Indexed Job.
func Manifest(c JobConfig) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	meta := func(name string) map[string]any {
		m := map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/name": "llmreplay", "llmreplay/run": c.Name}}
		if c.Namespace != "" {
			m["namespace"] = c.Namespace
		}
		return m
	}
	var docs []map[string]any
	volumes := []any{
		map[string]any{"name": "results", "persistentVolumeClaim": map[string]any{"claimName": c.ResultsClaim}},
	}
	if c.WorkloadData != nil {
		cm := c.Name + "-workload"
		docs = append(docs, map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(cm),
			"binaryData": map[string]any{configMapKey: c.WorkloadData}, // []byte marshals as base64
		})
		volumes = append(volumes, map[string]any{"name": "workload", "configMap": map[string]any{"name": cm}})
	} else {
		volumes = append(volumes, map[string]any{"name": "workload", "persistentVolumeClaim": map[string]any{"claimName": c.WorkloadClaim, "readOnly": true}})
	}
	args := []string{
		"replay", c.workloadFile(),
		"--url", c.URL,
		"--shards", strconv.Itoa(c.Shards),
		"--start-at", c.StartAt.UTC().Format(time.RFC3339Nano),
		// Kubernetes expands $(VAR) in args from the container's env.
		"-o", path.Join(resultsDir, c.ResultsPath, "shard-$(JOB_COMPLETION_INDEX).trace.zst"),
	}
	args = append(args, c.ReplayArg...)
	env := []any{
		// The Job controller sets this too; declaring it from the pod's
		// annotation keeps $(JOB_COMPLETION_INDEX) in args defined
		// whatever the cluster version injects.
		map[string]any{"name": "JOB_COMPLETION_INDEX", "valueFrom": map[string]any{"fieldRef": map[string]any{
			"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
	}
	if c.APIKeySecret != "" {
		env = append(env, map[string]any{"name": "OPENAI_API_KEY", "valueFrom": map[string]any{"secretKeyRef": map[string]any{
			"name": c.APIKeySecret, "key": "api-key"}}})
	}
	container := map[string]any{
		"name": "llmreplay", "image": c.Image, "args": args, "env": env,
		"resources": map[string]any{"requests": map[string]any{"cpu": c.CPU, "memory": c.Memory}},
		"volumeMounts": []any{
			map[string]any{"name": "workload", "mountPath": workloadDir, "readOnly": true},
			map[string]any{"name": "results", "mountPath": resultsDir},
		},
	}
	job := map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(c.Name),
		"spec": map[string]any{
			"completionMode":       "Indexed",
			"completions":          c.Shards,
			"parallelism":          c.Shards,
			"backoffLimitPerIndex": c.BackoffLimitPerIndex,
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "llmreplay", "llmreplay/run": c.Name}},
				"spec": map[string]any{
					// Never, not OnFailure: backoffLimitPerIndex needs it, and
					// a retried shard must be a new pod with a fresh trace.
					"restartPolicy": "Never",
					// The image runs as the distroless nonroot user (65532):
					// fsGroup makes the results volume writable for it.
					"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 65532, "fsGroup": 65532},
					"containers":      []any{container},
					"volumes":         volumes,
				},
			},
		},
	}
	docs = append(docs, job)
	var b strings.Builder
	b.WriteString("# llmreplay: a sharded replay as a Kubernetes Indexed Job (docs/DISTRIBUTED.md)\n")
	fmt.Fprintf(&b, "# %d shards start together at %s; each writes %s\n", c.Shards, c.StartAt.UTC().Format(time.RFC3339), path.Join(c.ResultsPath, "shard-I.trace.zst"))
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String()), nil
}
