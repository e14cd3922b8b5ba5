package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/workload"
	"github.com/llmreplay/llmreplay/workload/tokenize"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict turns one YAML document into obj, refusing any field the
// Kubernetes type does not have: what kubectl apply --validate=strict does.
func decodeStrict(t *testing.T, doc []byte, obj any) {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, doc)
	}
}

func docs(t *testing.T, y []byte) (cms []corev1.ConfigMap, jobs []batchv1.Job) {
	t.Helper()
	for _, d := range strings.Split(string(y), "\n---\n")[1:] {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(d), &kind); err != nil {
			t.Fatal(err)
		}
		switch kind.Kind {
		case "ConfigMap":
			var cm corev1.ConfigMap
			decodeStrict(t, []byte(d), &cm)
			cms = append(cms, cm)
		case "Job":
			var j batchv1.Job
			decodeStrict(t, []byte(d), &j)
			jobs = append(jobs, j)
		default:
			t.Fatalf("unexpected kind %q", kind.Kind)
		}
	}
	return
}

func base() JobConfig {
	return JobConfig{
		Name: "sweep", Namespace: "bench", Image: "registry.example/llmreplay:0.2", Shards: 4,
		WorkloadData: []byte("\x28\xb5\x2f\xfdfake workload bytes"),
		ResultsClaim: "llmreplay-results", ResultsPath: "run1",
		URL: "http://vllm.bench.svc:8000", ReplayArg: []string{"--label", "vLLM bf16"}, APIKeySecret: "vllm-key",
		StartAt: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), CPU: "2", Memory: "1Gi", BackoffLimitPerIndex: 1,
		Now: time.Date(2026, 12, 3, 9, 58, 0, 0, time.UTC),
	}
}

func TestManifestIsAValidIndexedJob(t *testing.T) {
	c := base()
	y, err := Manifest(c)
	if err != nil {
		t.Fatal(err)
	}
	cms, jobs := docs(t, y)
	if len(cms) != 1 || len(jobs) != 1 {
		t.Fatalf("%d ConfigMaps, %d Jobs", len(cms), len(jobs))
	}
	if got := cms[0].BinaryData["workload.zst"]; !bytes.Equal(got, c.WorkloadData) || cms[0].Name != "sweep-workload" {
		t.Errorf("ConfigMap %s holds %q", cms[0].Name, got)
	}
	j := jobs[0]
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v", s.CompletionMode)
	}
	if *s.Completions != 4 || *s.Parallelism != 4 || s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 1 {
		t.Errorf("completions %d parallelism %d backoffLimitPerIndex %v", *s.Completions, *s.Parallelism, s.BackoffLimitPerIndex)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever || len(ps.Containers) != 1 || ps.SecurityContext.FSGroup == nil || *ps.SecurityContext.FSGroup != 65532 {
		t.Fatalf("pod spec %+v", ps)
	}
	ct := ps.Containers[0]
	want := []string{"replay", "/workload/workload.zst", "--url", "http://vllm.bench.svc:8000", "--shards", "4",
		"--start-at", "2026-12-03T10:00:00Z", "-o", "/results/run1/shard-$(JOB_COMPLETION_INDEX).trace.zst", "--label", "vLLM bf16"}
	if !slices.Equal(ct.Args, want) || ct.Image != c.Image {
		t.Errorf("args %q\nwant %q", ct.Args, want)
	}
	if ct.Resources.Requests.Cpu().String() != "2" || ct.Resources.Requests.Memory().String() != "1Gi" {
		t.Errorf("requests %v", ct.Resources.Requests)
	}
	var idx, key bool
	for _, e := range ct.Env {
		if e.Name == "JOB_COMPLETION_INDEX" && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index") {
			idx = true
		}
		if e.Name == "OPENAI_API_KEY" && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "vllm-key" && e.Value == "" {
			key = true
		}
	}
	if !idx || !key {
		t.Errorf("env %+v", ct.Env)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		vols[v.Name] = v
	}
	if vols["results"].PersistentVolumeClaim.ClaimName != "llmreplay-results" || vols["workload"].ConfigMap.Name != "sweep-workload" {
		t.Errorf("volumes %+v", ps.Volumes)
	}
	if j.Namespace != "bench" || j.Name != "sweep" {
		t.Errorf("metadata %+v", j.ObjectMeta)
	}
}

func TestManifestLargeWorkloadOnAVolume(t *testing.T) {
	c := base()
	c.WorkloadData = make([]byte, ConfigMapLimit+1)
	if _, err := Manifest(c); err == nil || !strings.Contains(err.Error(), "more than a ConfigMap holds") {
		t.Errorf("oversized ConfigMap: %v", err)
	}
	c.WorkloadData, c.WorkloadClaim, c.WorkloadPath = nil, "workloads", "big/sweep.workload.zst"
	y, err := Manifest(c)
	if err != nil {
		t.Fatal(err)
	}
	cms, jobs := docs(t, y)
	ps := jobs[0].Spec.Template.Spec
	if len(cms) != 0 || ps.Containers[0].Args[1] != "/workload/big/sweep.workload.zst" {
		t.Errorf("%d ConfigMaps, args %q", len(cms), ps.Containers[0].Args)
	}
	for _, v := range ps.Volumes {
		if v.Name == "workload" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "workloads" || !v.PersistentVolumeClaim.ReadOnly) {
			t.Errorf("workload volume %+v", v)
		}
	}
}

func TestManifestBadInput(t *testing.T) {
	for _, c := range []struct {
		mod  func(*JobConfig)
		want string
	}{
		{func(c *JobConfig) { c.Name = "Sweep_1" }, "Name"},
		{func(c *JobConfig) { c.Image = "" }, "Image is required"},
		{func(c *JobConfig) { c.Shards = 0 }, "Shards 0"},
		{func(c *JobConfig) { c.ResultsClaim = "" }, "ResultsClaim is required"},
		{func(c *JobConfig) { c.URL = "" }, "URL is required"},
		{func(c *JobConfig) { c.ReplayArg = []string{"--shard", "0/4"} }, "the Job sets --shard itself"},
		{func(c *JobConfig) { c.WorkloadData = nil }, "no workload"},
		// What every pod's replay would refuse, and what would put a
		// credential or a document of its own into the manifest.
		{func(c *JobConfig) { c.URL = "not a url" }, "is not an http(s) address"},
		{func(c *JobConfig) { c.URL = "ftp://vllm:8000" }, "is not an http(s) address"},
		{func(c *JobConfig) { c.URL = "http://u:sk-secret-123456@vllm:8000" }, "URL holds credentials (user info"},
		{func(c *JobConfig) { c.URL = "http://vllm:8000/?api_key=sk-secret-123456" }, "URL holds a credential in its query (api_key=…)"},
		{func(c *JobConfig) { c.StartAt = c.Now.Add(-time.Second) }, "StartAt 2026-12-03T09:57:59Z is in the past"},
		{func(c *JobConfig) { c.CPU = "lots" }, `CPU "lots" is not a Kubernetes resource quantity`},
		{func(c *JobConfig) { c.Memory = "-1Gi" }, `Memory "-1Gi" is not`},
		{func(c *JobConfig) { c.Image = "registry.example/llm replay:1" }, "Image"},
		{func(c *JobConfig) { c.ResultsPath = "run1\n---\nkind: Pod" }, "ResultsPath \"run1\\n---\\nkind: Pod\" holds a control character"},
		{func(c *JobConfig) { c.ResultsPath = "../x" }, "leads out of its volume"},
		{func(c *JobConfig) { c.ResultsPath = "/x" }, "is absolute"},
	} {
		cfg := base()
		c.mod(&cfg)
		if _, err := Manifest(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		} else if strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("the error shows the credential: %v", err)
		}
	}
}

// TestManifestKeepsValuesLiteral: Kubernetes expands $(VAR) in a
// container's args and turns $$ into $: every $ of a value the pods
// receive is doubled, so they get it as given, while the Job's own
// $(JOB_COMPLETION_INDEX) is expanded. No value goes into a comment.
func TestManifestKeepsValuesLiteral(t *testing.T) {
	c := base()
	c.URL = "http://vllm:8000/$(HOST)"
	c.ResultsPath = "runs/$(HOME)"
	c.ReplayArg = []string{"--label", "$(OPENAI_API_KEY)", "--model", "a$$b$"}
	y, err := Manifest(c)
	if err != nil {
		t.Fatal(err)
	}
	_, jobs := docs(t, y)
	args := jobs[0].Spec.Template.Spec.Containers[0].Args
	want := []string{"replay", "/workload/workload.zst", "--url", "http://vllm:8000/$$(HOST)", "--shards", "4",
		"--start-at", "2026-12-03T10:00:00Z", "-o", "/results/runs/$$(HOME)/shard-$(JOB_COMPLETION_INDEX).trace.zst",
		"--label", "$$(OPENAI_API_KEY)", "--model", "a$$$$b$$"}
	if !slices.Equal(args, want) {
		t.Errorf("args %q\nwant %q", args, want)
	}
	for _, line := range strings.Split(string(y), "\n") {
		if strings.HasPrefix(line, "#") && strings.Contains(line, "runs") {
			t.Errorf("a value is in a comment: %q", line)
		}
	}
}

// TestShardCountCheck: checkShards looks at the last shard only and finds
// the largest count by bisection, relying on workload.Shard dealing every
// kind of phase from index 0 up. Here that is held to every shard of
// every count from 1 to past the requests, for each kind of schedule and
// for conversations.
func TestShardCountCheck(t *testing.T) {
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []workload.BuildConfig{
		{Schedule: "burst:1,3", Repeats: 2},
		{Schedule: "closed:2", Requests: 5},
		{Schedule: "rate:50", Requests: 6, Arrival: "poisson"},
		{Schedule: "burst:2,3", Repeats: 1, Turns: "2"},
		{Schedule: "closed:2", Turns: "2", Sessions: 3},
	} {
		cfg.Tok, cfg.InputTokens, cfg.MaxTokens = tok, []int{100}, 4
		wl, err := workload.Build(cfg)
		if err != nil {
			t.Fatalf("%s: %v", cfg.Schedule, err)
		}
		largest := 0
		for n := 1; n <= len(wl.Requests)+2; n++ {
			all := true
			for i := 0; i < n; i++ {
				part, err := workload.Shard(wl, workload.ShardSpec{Index: i, Count: n})
				if err != nil || len(part.Requests) == 0 {
					all = false
				}
			}
			if all != lastShardSends(wl, n) {
				t.Errorf("%s, %d shards: every shard sends %v, the last %v", cfg.Schedule, n, all, !all)
			}
			if all {
				largest = n
			}
			err := checkShards(wl, n)
			if (err == nil) != all || err != nil && !strings.Contains(err.Error(), fmt.Sprintf("give at most %d shards", largest)) {
				t.Errorf("%s, %d shards: %v (largest that works: %d)", cfg.Schedule, n, err, largest)
			}
		}
	}
}
