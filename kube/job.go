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

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
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

	// What every pod's replay would check, checked when the manifest is
	// written instead of in every pod once the Job runs:
	//
	// Workload is the decoded workload (nil skips the checks that need
	// it): each of the Shards parts must hold a request, and API must be
	// able to carry its shape.
	Workload *workload.Workload
	// API is the --api given among ReplayArg ("" for replay's default).
	API string
	// Now is when the manifest is written, for StartAt to be after it
	// (zero: the clock's now).
	Now time.Time
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Validate checks cfg; each error is a fielderr naming the field, joined
// (errors.Join) when several are wrong.
func (c *JobConfig) Validate() error {
	var errs []error
	if !dnsLabel.MatchString(c.Name) || len(c.Name) > 50 {
		errs = append(errs, settingErr("Name", "{Name} %q is not a lower-case DNS label of at most 50 characters (a-z, 0-9, -)", c.Name))
	}
	if c.Namespace != "" && !dnsLabel.MatchString(c.Namespace) {
		errs = append(errs, settingErr("Namespace", "{Namespace} %q is not a DNS label", c.Namespace))
	}
	if c.Image == "" {
		errs = append(errs, settingErr("Image", "{Image} is required: the llmreplay image to run (build it from the Containerfile)"))
	}
	if c.Shards < 1 || c.Shards > 10_000 {
		errs = append(errs, settingErr("Shards", "{Shards} %d is not from 1 to 10000", c.Shards))
	}
	switch {
	case c.WorkloadData != nil && c.WorkloadClaim != "":
		errs = append(errs, settingErr("WorkloadClaim", "WorkloadData and {WorkloadClaim} both set: the workload travels one way"))
	case c.WorkloadData != nil && len(c.WorkloadData) > ConfigMapLimit:
		errs = append(errs, settingErr("WorkloadClaim", "the workload is %d bytes, more than a ConfigMap holds (%d): put it on a volume and set {WorkloadClaim} and {WorkloadPath}", len(c.WorkloadData), ConfigMapLimit))
	case c.WorkloadData == nil && (c.WorkloadClaim == "" || c.WorkloadPath == ""):
		errs = append(errs, settingErr("WorkloadClaim", "no workload: set WorkloadData, or {WorkloadClaim} and {WorkloadPath}"))
	}
	if c.ResultsClaim == "" {
		errs = append(errs, settingErr("ResultsClaim", "{ResultsClaim} is required: the PersistentVolumeClaim the shards write their traces to"))
	}
	if c.URL == "" {
		errs = append(errs, settingErr("URL", "{URL} is required: the server's base address as the pods reach it"))
	} else if err := c.checkURL(); err != nil {
		errs = append(errs, err)
	}
	now := c.Now
	if now.IsZero() {
		now = time.Now()
	}
	switch {
	case c.StartAt.IsZero():
		errs = append(errs, settingErr("StartAt", "{StartAt} is required: the common start time"))
	case !c.StartAt.After(now):
		errs = append(errs, settingErr("StartAt", "{StartAt} %s is in the past (it is %s now): every shard would start at once, late and apart; give a time after the pods will have started",
			c.StartAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
	}
	for _, q := range []struct{ field, v, eg string }{{"CPU", c.CPU, "2 or 500m"}, {"Memory", c.Memory, "1Gi or 512Mi"}} {
		if q.v == "" {
			continue // no request: the cluster's default
		}
		if v, err := resource.ParseQuantity(q.v); err != nil || v.Sign() < 0 {
			errs = append(errs, settingErr(q.field, "{"+q.field+"} %q is not a Kubernetes resource quantity: give one like %s", q.v, q.eg))
		}
	}
	if c.Image != "" {
		// The kubelet's own parser: a name it refuses is a pod that never
		// starts (InvalidImageName).
		if _, err := reference.ParseNormalizedNamed(c.Image); err != nil {
			errs = append(errs, settingErr("Image", "{Image} %q is not an image reference (%v): give one like registry.example/llmreplay:1", c.Image, err))
		}
	}
	for _, f := range []struct{ field, v string }{{"ResultsPath", c.ResultsPath}, {"WorkloadPath", c.WorkloadPath}} {
		if err := checkVolumePath(f.field, f.v); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Workload != nil && c.Shards >= 1 && c.Shards <= workload.MaxShards {
		if err := checkShards(c.Workload, c.Shards); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Workload != nil {
		if err := replay.CheckAPI(c.API, c.Workload); err != nil {
			api := c.API
			if api == "" {
				api = replay.DefaultAPI + " (replay's default)"
			}
			problem := err.Error()
			if fe := fielderr.As(err); fe != nil {
				problem = fe.Problem + ": " + fe.Fix
			}
			errs = append(errs, fmt.Errorf("--api %s after --: %s", api, problem))
		}
	}
	if c.BackoffLimitPerIndex < 0 {
		errs = append(errs, settingErr("BackoffLimitPerIndex", "{BackoffLimitPerIndex} %d is negative: give 0 (no retry) or more", c.BackoffLimitPerIndex))
	}
	for _, a := range c.ReplayArg {
		for _, owned := range []string{"--shard", "--shards", "--start-at", "--start-in", "-o", "--output"} {
			if a == owned || strings.HasPrefix(a, owned+"=") {
				errs = append(errs, settingErr("ReplayArg", "{ReplayArg} %q: the Job sets %s itself", a, owned))
			}
		}
	}
	return errors.Join(errs...)
}

// checkURL refuses an address every pod's replay would refuse, and one
// that holds a credential: the manifest is readable by whoever reads the
// Job, and the key has its own way in (APIKeySecret). The credential is
// never echoed.
func (c *JobConfig) checkURL() error {
	u, err := replay.CheckURL(c.URL)
	if fe := fielderr.As(err); fe != nil {
		return settingErr("URL", "{URL} %s: %s", fe.Problem, fe.Fix)
	}
	if err != nil {
		return fmt.Errorf("URL: %v", err)
	}
	const fix = "it would be written in clear into every pod's args; put the key in a Secret (key api-key) and give its name to {APIKeySecret} (sent as a bearer token)"
	if u.User != nil {
		return settingErr("URL", "{URL} holds credentials (user info before the host): "+fix)
	}
	for name, vs := range u.Query() {
		for _, v := range vs {
			if replay.SecretQuery(name, v) {
				return settingErr("URL", "{URL} holds a credential in its query (%s=…): "+fix, name)
			}
		}
	}
	return nil
}

// checkVolumePath refuses a path on a volume that would leave it or break
// the manifest: a control character (a line break in a value is where a
// YAML document could start), an absolute path, or "..".
func checkVolumePath(field, p string) error {
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return settingErr(field, "{"+field+"} %q holds a control character: give a plain folder path", p)
		}
	}
	if path.IsAbs(p) {
		return settingErr(field, "{"+field+"} %q is absolute: give a path relative to the volume's root", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return settingErr(field, "{"+field+"} %q leads out of its volume (..): give a path inside it", p)
		}
	}
	return nil
}

// checkShards refuses a shard count that leaves a shard without a
// request: its pod's replay refuses to run, and its index fails the Job.
// Under workload.Shard's rules the last shard is always the emptiest (a
// burst's slots, a closed loop's workers and open-loop arrivals are all
// dealt from index 0 up), so it alone is checked, and the largest count
// that works is found by bisection (TestShardCountCheck holds both to
// every shard of every count).
func checkShards(wl *workload.Workload, n int) error {
	if lastShardSends(wl, n) {
		return nil
	}
	lo, hi := 1, n // lastShardSends(lo) holds unless the workload is empty; hi fails
	if !lastShardSends(wl, lo) {
		return settingErr("Shards", "{Shards} %d: the workload has no request to send", n)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if lastShardSends(wl, mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return settingErr("Shards", "{Shards} %d: the workload has %d requests and shard %d of %d would send none (its replay refuses to run); give at most %d shards",
		n, len(wl.Requests), n-1, n, lo)
}

func lastShardSends(wl *workload.Workload, n int) bool {
	part, err := workload.Shard(wl, workload.ShardSpec{Index: n - 1, Count: n})
	return err == nil && len(part.Requests) > 0
}

// literal escapes s for a container's args: Kubernetes expands $(VAR)
// there from the container's environment and turns $$ into $, so every $
// is doubled and the pod receives s as it was given (a label
// "$(OPENAI_API_KEY)" would otherwise become the key).
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

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
		"replay", literal(c.workloadFile()),
		"--url", literal(c.URL),
		"--shards", strconv.Itoa(c.Shards),
		"--start-at", c.StartAt.UTC().Format(time.RFC3339Nano),
		// Kubernetes expands $(VAR) in args from the container's env:
		// here, and only here, on purpose.
		"-o", path.Join(resultsDir, literal(c.ResultsPath), "shard-$(JOB_COMPLETION_INDEX).trace.zst"),
	}
	for _, a := range c.ReplayArg {
		args = append(args, literal(a))
	}
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
	// Fixed text only: a value in a comment is outside YAML's quoting, and
	// a line break in it would start a document of its own.
	b.WriteString("# llmreplay: a sharded replay as a Kubernetes Indexed Job (docs/DISTRIBUTED.md)\n")
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
