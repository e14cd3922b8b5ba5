package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// kubeBase is a kube job command line that works, up to its -o.
func kubeBase(wl string) []string {
	return []string{"kube", "job", wl, "--shards", "2", "--image", "registry.example/llmreplay:1", "--url", "http://vllm:8000",
		"--results-claim", "r", "--start-at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
}

// withFlag returns args with flag's value replaced (or the flag added).
func withFlag(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == flag && i+1 < len(out) {
			out[i+1] = value
			return out
		}
	}
	return append(out, flag, value)
}

// TestKubeJobRefusesURLCredentials: a --url holding credentials (user
// info, or a query value under a secret-looking name) would be written in
// clear into the Job's args, readable by anyone who can read the Job. It
// is refused (exit 2, one line pointing to --api-key-secret, never
// echoing the secret), as a credential header after -- already is. A query
// value that is not a credential (Azure's api-version) is kept.
func TestKubeJobRefusesURLCredentials(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := kubeWorkload(t, bin, dir)
	const key = "sk-kube-url-SECRET-0123456789"
	job := filepath.Join(dir, "job.yaml")
	for _, u := range []string{
		"http://u:" + key + "@vllm:8000",
		"http://" + key + "@vllm:8000",
		"http://vllm:8000/?api_key=" + key,
		"http://vllm:8000/v1?api-version=2024-10-21&access_token=" + key,
		"http://vllm:8000/?sig=" + key,
	} {
		_, e, code := run(t, nil, bin, append(withFlag(kubeBase(wl), "--url", u), "-o", job)...)
		if code != 2 {
			t.Errorf("--url %s: exit %d, want 2: %s", u, code, e)
		}
		oneLine(t, "--url with credentials", e, "--url", "--api-key-secret")
		if strings.Contains(e, key) || strings.Contains(e, key[8:20]) {
			t.Errorf("--url with credentials: the error shows the key: %s", e)
		}
		if _, err := os.Stat(job); err == nil {
			t.Fatalf("--url %s: a manifest was written", u)
		}
	}
	mustRun(t, bin, append(withFlag(kubeBase(wl), "--url", "https://x.openai.azure.com/openai?api-version=2024-10-21"), "-o", job)...)
	if y, _ := os.ReadFile(job); !strings.Contains(string(y), "api-version=2024-10-21") {
		t.Errorf("the api-version query was not kept:\n%s", y)
	}
}

// TestKubeJobKeepsValuesLiteral: nothing a user gives kube job can change
// the manifest's structure or be rewritten by Kubernetes. A
// --results-path with a line break cannot start a YAML document of its
// own (values are kept out of comments, and the path is checked), and
// $(VAR) in any value the pods receive is written as $$(VAR), which
// Kubernetes turns back into the literal $(VAR) instead of expanding it:
// with --api-key-secret, --label '$(OPENAI_API_KEY)' would otherwise make
// the key the label of every trace. The Job's own $(JOB_COMPLETION_INDEX)
// is still expanded.
func TestKubeJobKeepsValuesLiteral(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := kubeWorkload(t, bin, dir)
	job := filepath.Join(dir, "job.yaml")
	inject := "run1\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: evil\n"
	for _, p := range []string{inject, "../../etc", "/abs"} {
		_, e, code := run(t, nil, bin, append(kubeBase(wl), "--results-path", p, "-o", job)...)
		if code != 2 {
			t.Errorf("--results-path %q: exit %d, want 2: %s", p, code, e)
		}
		oneLine(t, "--results-path "+p, e, "--results-path")
		if _, err := os.Stat(job); err == nil {
			t.Fatalf("--results-path %q: a manifest was written", p)
		}
	}
	args := append(kubeBase(wl), "--api-key-secret", "vllm-key", "--results-path", "runs/$(HOME)", "-o", job,
		"--", "--label", "$(OPENAI_API_KEY)", "--model", "a$$b")
	mustRun(t, bin, args...)
	y, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(y), "\n---\n")
	if len(docs) != 3 { // the comment, the ConfigMap, the Job
		t.Errorf("%d YAML documents, want the ConfigMap and the Job", len(docs)-1)
	}
	var job1 struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Args []string }
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &job1); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(job1.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--label $$(OPENAI_API_KEY)", "--model a$$$$b", "/results/runs/$$(HOME)/shard-$(JOB_COMPLETION_INDEX).trace.zst"} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
	for _, line := range strings.Split(string(y), "\n") {
		if strings.HasPrefix(line, "#") && strings.Contains(line, "HOME") {
			t.Errorf("a value is written into a comment: %q", line)
		}
	}
}

// TestKubeJobChecksAsReplayWould: what every pod's replay would refuse is
// refused when the manifest is written (exit 2, one line naming the flag
// and the fix, no file): a URL that is not an http(s) address, a start
// time already past, more shards than the workload has requests for, an
// API the workload's shape cannot use, resource quantities Kubernetes
// cannot read, and an image name no registry can hold.
func TestKubeJobChecksAsReplayWould(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := kubeWorkload(t, bin, dir) // burst:4, one repeat: 4 requests, chat-shaped
	job := filepath.Join(dir, "job.yaml")
	base := kubeBase(wl)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{withFlag(base, "--url", "not a url"), []string{"--url", "http"}},
		{withFlag(base, "--url", "ftp://vllm:8000"), []string{"--url", "http"}},
		{withFlag(base, "--url", "http://"), []string{"--url"}},
		{withFlag(base, "--start-at", "2020-01-02T03:04:05Z"), []string{"--start-at", "past"}},
		{withFlag(base, "--shards", "50"), []string{"--shards 50", "4 requests", "at most 4"}},
		{append(append([]string(nil), base...), "--", "--api", "llamacpp"), []string{"--api llamacpp", "chat"}},
		{append(append([]string(nil), base...), "--", "--api", "nonsense"), []string{"--api", "nonsense"}},
		{withFlag(base, "--cpu", "lots"), []string{"--cpu", "lots"}},
		{withFlag(base, "--memory", "1Gigabyte"), []string{"--memory", "1Gigabyte"}},
		{withFlag(base, "--image", "registry.example/llm replay:1"), []string{"--image"}},
		{withFlag(base, "--image", "Registry/UPPER:1"), []string{"--image"}},
	} {
		args := c.args
		if i := indexOf(args, "--"); i >= 0 {
			args = append(append(append([]string(nil), args[:i]...), "-o", job), args[i:]...)
		} else {
			args = append(args, "-o", job)
		}
		_, e, code := run(t, nil, bin, args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2: %s", c.args[3:], code, e)
		}
		oneLine(t, strings.Join(c.want, " "), e, c.want...)
		if _, err := os.Stat(job); err == nil {
			t.Fatalf("%q: a manifest was written", c.args)
		}
	}
	// What should pass does: --api openai-chat for a chat workload, 4 shards
	// for 4 requests, quantities and an image with a digest.
	ok := withFlag(withFlag(withFlag(withFlag(base, "--shards", "4"), "--cpu", "500m"), "--memory", "512Mi"),
		"--image", "registry.example:5000/team/llmreplay@sha256:"+strings.Repeat("a", 64))
	mustRun(t, bin, append(append(ok, "-o", job), "--", "--api", "openai-chat")...)
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}
