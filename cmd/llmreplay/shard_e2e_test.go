package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// traceIDs reads a trace's record IDs (with how often each occurs) and
// shard indices.
func traceIDs(t *testing.T, path string) (map[string]int, map[int]int, trace.Header) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ids, shards := map[string]int{}, map[int]int{}
	for r.Scan() {
		ids[r.Record().ID]++
		if s := r.Record().Shard; s != nil {
			shards[*s]++
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return ids, shards, r.Header()
}

// medianPerStream returns analyze's per-stream tok/s median per
// concurrency from its JSON output.
func medianPerStream(t *testing.T, bin, path string) map[int]float64 {
	t.Helper()
	out, errs, code := run(t, nil, bin, "analyze", "--format", "json", "--by", "concurrency", path)
	if code != 0 {
		t.Fatalf("analyze %s: exit %d: %s", path, code, errs)
	}
	var doc struct {
		Groups []struct {
			Keys   map[string]any `json:"keys"`
			Values map[string]struct {
				Value float64 `json:"value"`
			} `json:"metrics"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("analyze json: %v\n%s", err, out)
	}
	m := map[int]float64{}
	for _, g := range doc.Groups {
		c, _ := g.Keys["concurrency"].(float64)
		m[int(c)] = g.Values["per_stream_tps"].Value
	}
	return m
}

// TestShardedRunMergesToOneRun is the local stand-in for a Kubernetes
// Indexed Job (docs/DISTRIBUTED.md): three llmreplay processes with
// JOB_COMPLETION_INDEX set replay one workload against one simulator from a
// common start time, trace merge joins their traces, and the merged trace
// holds every request exactly once and analyses like an unsharded run of
// the same workload. A missing shard is named; a killed one (its file cut
// mid-write) is merged with a warning.
func TestShardedRunMergesToOneRun(t *testing.T) {
	bin := parallelBinary(t)
	// Streams paced at a fixed 100 tok/s whatever the batch: the per-stream
	// comparison below then tests the merge's grouping, not how a busy
	// machine schedules two runs of a batching model (a loaded run saw the
	// shards drift apart and a vLLM-profile batch run faster).
	url, dir, wl := simWorkload(t, bin, []string{"--profile", "fast", "--token-interval", "10ms"}, "--input-tokens", "100", "--max-tokens", "32", "--schedule", "burst:3,9", "--repeats", "2")
	full := filepath.Join(dir, "full.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", url, "-o", full)

	const n = 3
	// The shards start at a common time far enough ahead that each has
	// started and read its workload by then on a loaded machine (a shard
	// that starts late is merged with a warning and its phases overlap the
	// others' less; 3 s was too close with the package's tests running in
	// parallel beside busy neighbours).
	start := time.Now().Add(10 * time.Second).UTC().Format(time.RFC3339Nano)
	shards := make([]string, n)
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := 0; i < n; i++ {
		shards[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.trace.zst", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, e, code := run(t, []string{"JOB_COMPLETION_INDEX=" + fmt.Sprint(i)}, bin,
				"replay", wl, "--url", url, "--shards", fmt.Sprint(n), "--start-at", start, "-o", shards[i])
			if code != 0 {
				errs[i] = fmt.Sprintf("shard %d: exit %d: %s", i, code, e)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	_, _, h := traceIDs(t, shards[1])
	if h.Shard == nil || h.Shard.Index != 1 || h.Shard.Count != n || h.Shard.StartAt == "" {
		t.Fatalf("shard 1's header: %+v", h.Shard)
	}

	merged := filepath.Join(dir, "merged.trace.zst")
	_, e, code := run(t, nil, bin, "trace", "merge", shards[2], shards[0], shards[1], "-o", merged)
	if code != 0 || !strings.Contains(e, "merged 3 shards of 3") || !strings.Contains(e, "exact (every shard ran on one host") {
		t.Fatalf("merge: exit %d: %s", code, e)
	}
	want, _, fh := traceIDs(t, full)
	got, byShard, mh := traceIDs(t, merged)
	if len(got) != len(want) {
		t.Errorf("merged trace has %d distinct requests, the unsharded run %d", len(got), len(want))
	}
	for id := range want {
		if got[id] != 1 {
			t.Errorf("request %s is in the merged trace %d times", id, got[id])
		}
	}
	if len(byShard) != n || mh.WorkloadDigest != fh.WorkloadDigest {
		t.Errorf("records by shard %v; digests %s vs %s", byShard, mh.WorkloadDigest, fh.WorkloadDigest)
	}
	// Same fixed pace per stream: per-stream speed agrees, concurrency by
	// concurrency. The margin is wide because both runs share a busy
	// machine; the exact checks above (every request once, the phases'
	// streams adding up) carry the proof, this one catches grouping
	// mistakes (a level missing or mislabelled in the merged trace).
	fm, mm := medianPerStream(t, bin, full), medianPerStream(t, bin, merged)
	for _, c := range []int{3, 9} {
		if fm[c] == 0 || mm[c] == 0 || mm[c]/fm[c] < 0.5 || mm[c]/fm[c] > 2 {
			t.Errorf("concurrency %d: per-stream %.1f tok/s merged vs %.1f unsharded", c, mm[c], fm[c])
		}
	}
	if out, _, _ := run(t, nil, bin, "trace", "info", merged); !strings.Contains(out, "3 merged of 3") {
		t.Errorf("trace info of the merged trace:\n%s", out)
	}

	// A shard that never ran: named, exit 2, nothing written.
	part := filepath.Join(dir, "part.trace.zst")
	_, e, code = run(t, nil, bin, "trace", "merge", shards[0], shards[1], "-o", part)
	if code != 2 || !strings.Contains(e, "shard 2 of 3 is missing") {
		t.Errorf("missing shard: exit %d: %s", code, e)
	}
	if _, err := os.Stat(part); err == nil {
		t.Error("a refused merge left a file behind")
	}
	_, e, code = run(t, nil, bin, "trace", "merge", "--allow-missing", shards[0], shards[1], "-o", part)
	if code != 0 || !strings.Contains(e, "missing shards: [2]") {
		t.Errorf("--allow-missing: exit %d: %s", code, e)
	}
	if out, _, _ := run(t, nil, bin, "analyze", part); !strings.Contains(unwrapped(out), "merged without 1 of its 3 shards") {
		t.Errorf("analyze of a merge without shard 2 does not say so:\n%s", out)
	}
	// A shard killed mid-run leaves a file cut mid-write: merged with what
	// it holds, and said so.
	data, _ := os.ReadFile(shards[2])
	cut := filepath.Join(dir, "killed.trace.zst")
	// Cut inside a zstd frame: the writer ends a frame at every flush, and
	// a file ending exactly between two frames reads as a complete trace
	// with fewer records (a run killed between flushes; nothing in the
	// bytes says it was cut). Two thirds landed on such a boundary once.
	at := len(data) * 2 / 3
	for bytes.HasPrefix(data[at:], []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		at--
	}
	os.WriteFile(cut, data[:at], 0o644)
	_, e, code = run(t, nil, bin, "trace", "merge", shards[0], shards[1], cut, "-o", filepath.Join(dir, "k.trace.zst"))
	if code != 0 || !strings.Contains(e, "ends mid-write (shard 2 was killed)") {
		t.Errorf("killed shard: exit %d: %s", code, e)
	}
	// Bad input: a shard count the workload cannot feed, a shard past the
	// count, a duplicated index.
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--shard", "5/4"); code != 2 || !strings.Contains(e, "does not exist") {
		t.Errorf("--shard 5/4: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--shards", "3"); code != 2 || !strings.Contains(e, "JOB_COMPLETION_INDEX") {
		t.Errorf("--shards without the index: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--shard", "30/31"); code != 2 || !strings.Contains(e, "has no request to send") {
		t.Errorf("more shards than requests: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--start-at", "2099-01-01T00:00:00Z"); code != 2 || !strings.Contains(e, "more than 24h0m0s away") {
		t.Errorf("--start-at far away: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--start-at", "tomorrow"); code != 2 || !strings.Contains(e, "not an RFC 3339 time") {
		t.Errorf("--start-at tomorrow: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "trace", "merge", full, "-o", filepath.Join(dir, "u.trace.zst")); code != 2 || !strings.Contains(e, "is not the trace of a shard") {
		t.Errorf("merging an unsharded trace: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "trace", "merge", shards[0], shards[1], shards[1], "-o", filepath.Join(dir, "d.trace.zst")); code != 2 || !strings.Contains(e, "are both shard 1/3") {
		t.Errorf("duplicate shard: exit %d: %s", code, e)
	}
}

// kubeWorkload builds the small workload the kube job tests hand out.
func kubeWorkload(t *testing.T, bin, dir string) string {
	t.Helper()
	return buildWorkload(t, bin, dir, "--input-tokens", "100", "--max-tokens", "8", "--schedule", "burst:4", "--repeats", "1")
}

// TestKubeJob writes the Job for a workload through the binary; the
// manifest's fields are checked against k8s.io/api's types in
// kube. Here: the command's own behaviour and bad input.
func TestKubeJob(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := kubeWorkload(t, bin, dir)
	job := filepath.Join(dir, "job.yaml")
	mustRun(t, bin, "kube", "job", wl, "--shards", "4", "--image", "registry.example/llmreplay:1", "--url", "http://vllm:8000",
		"--results-claim", "results", "--start-at", "2030-01-02T03:04:05Z", "-o", job, "--", "--label", "vLLM bf16")
	y, _ := os.ReadFile(job)
	for _, want := range []string{"completionMode: Indexed", "completions: 4", "parallelism: 4", "backoffLimitPerIndex: 1",
		"- --start-at\n        - \"2030-01-02T03:04:05Z\"", "shard-$(JOB_COMPLETION_INDEX).trace.zst", "- vLLM bf16", "kind: ConfigMap"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("job.yaml lacks %q", want)
		}
	}
	if _, e, code := run(t, nil, bin, "kube", "job", wl, "--shards", "4", "--url", "http://vllm:8000", "--results-claim", "r"); code != 2 || !strings.Contains(e, "--image is required") {
		t.Errorf("no --image: exit %d: %s", code, e)
	}
	if _, e, code := run(t, nil, bin, "kube", "job", wl, "--shards", "4", "--image", "i", "--url", "u", "--results-claim", "r", "--", "--shard", "1/4"); code != 2 || !strings.Contains(e, "the Job sets --shard itself") {
		t.Errorf("--shard after --: exit %d: %s", code, e)
	}
}

// shardFile describes one hand-made shard trace.
type shardFile struct {
	index, count   int
	startWall      string
	startAt        string
	lateNs         int64
	model, label   string
	indices        []int
	host           string
	workloadDigest string
}

// writeShard writes s as NAME in dir: a shard of a burst whose records
// have the given workload indices, each 10 ms long.
func writeShard(t *testing.T, dir, name string, s shardFile) string {
	t.Helper()
	if s.model == "" {
		s.model = "m"
	}
	if s.label == "" {
		s.label = "L"
	}
	if s.host == "" {
		s.host = "one-host"
	}
	if s.workloadDigest == "" {
		s.workloadDigest = "sha256:ab"
	}
	h := trace.Header{WorkloadDigest: s.workloadDigest, Tokenizer: "o200k_base", Shape: "chat", API: "openai-chat", Model: s.model, Label: s.label,
		Phases:    []trace.Phase{{Index: 0, Name: "burst-c4", Kind: "burst", Concurrency: len(s.indices), InputTokens: 100, MaxTokens: 4, Requests: len(s.indices)}},
		StartWall: s.startWall, Host: trace.Host{Hostname: s.host},
		Shard: &trace.Shard{Index: s.index, Count: s.count, StartAt: s.startAt, StartLateNs: s.lateNs, Host: s.host}}
	const ms = int64(1_000_000)
	var recs []trace.Record
	for _, i := range s.indices {
		recs = append(recs, trace.Record{ID: fmt.Sprintf("r%d", i), Index: i, InputTokens: 100, MaxTokens: 4, Sent: ms, Headers: 2 * ms, Done: 10 * ms, Status: 200,
			FinishReason: "length", Usage: `{"completion_tokens":2,"prompt_tokens":100}`,
			Chunks: []trace.Chunk{{T: 3 * ms, Bytes: 30, Text: "1"}, {T: 9 * ms, Bytes: 30, Text: ", 2"}}})
	}
	p := filepath.Join(dir, name)
	writeTrace(t, p, h, recs)
	return p
}

// TestMergeRefusesShardsOfDifferentRuns: trace merge joins only shards of
// one run. Shards of one workload and shard count that started apart
// (beyond what a shard's recorded late start explains), that were given
// different common starts, that ran another model or label, or whose
// records repeat a request (a shard relabelled to another index, or one
// index twice) are refused: exit 2, one line naming the shard's file and
// the fix, and no merged file. A start time in year 1 is refused as a
// damaged header, not turned into an overflowed offset. Before the fix all
// of these merged, the first as "clock alignment: exact" with aggregate
// tok/s read over a ten-minute window.
func TestMergeRefusesShardsOfDifferentRuns(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	const at = "2026-12-03T10:00:00Z"
	s0 := writeShard(t, dir, "s0.trace.zst", shardFile{index: 0, count: 2, startWall: "2026-12-03T10:00:00.001Z", startAt: at, lateNs: 1_000_000, indices: []int{0, 2}})
	good1 := writeShard(t, dir, "good1.trace.zst", shardFile{index: 1, count: 2, startWall: "2026-12-03T10:00:00.002Z", startAt: at, lateNs: 2_000_000, indices: []int{1, 3}})
	// Started 3 s late and says so: one run, merged with a warning.
	late1 := writeShard(t, dir, "late1.trace.zst", shardFile{index: 1, count: 2, startWall: "2026-12-03T10:00:03Z", startAt: at, lateNs: 3_000_000_000, indices: []int{1, 3}})
	for _, c := range []struct {
		name, shard1 string
		warn         string
	}{{"on time", good1, ""}, {"late, and recorded as late", late1, "shard 1 started 3s after the common start"}} {
		out := filepath.Join(dir, "ok-"+strings.ReplaceAll(c.name, " ", "")+".trace.zst")
		_, e, code := run(t, nil, bin, "trace", "merge", s0, c.shard1, "-o", out)
		if code != 0 || !strings.Contains(e, c.warn) {
			t.Errorf("%s: exit %d, stderr %q; want 0 and %q", c.name, code, e, c.warn)
		}
	}

	bad := []struct {
		name  string
		s1    shardFile
		s0    *shardFile
		want  []string
		file1 bool // the error names the second file (else the first)
	}{
		{"started ten minutes apart, no common start",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T10:10:00Z", indices: []int{1, 3}},
			&shardFile{index: 0, count: 2, startWall: "2026-12-03T10:00:00Z", indices: []int{0, 2}},
			[]string{"started 10m0s after", "not one run", "--start-at"}, true},
		{"a later run with the same common start, not recorded as late",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T10:10:00Z", startAt: at, lateNs: 0, indices: []int{1, 3}}, nil,
			[]string{"10m0s after its common start", "records starting 0s late"}, true},
		{"different common starts",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T11:00:00Z", startAt: "2026-12-03T11:00:00Z", indices: []int{1, 3}}, nil,
			[]string{"common start 2026-12-03T11:00:00Z", "2026-12-03T10:00:00Z", "not one run"}, true},
		{"another model",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T10:00:00.002Z", startAt: at, lateNs: 2_000_000, model: "other", indices: []int{1, 3}}, nil,
			[]string{`model "other"`, `model "m"`, "not one run"}, true},
		{"another label",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T10:00:00.002Z", startAt: at, lateNs: 2_000_000, label: "Q8", indices: []int{1, 3}}, nil,
			[]string{`label "Q8"`, `label "L"`}, true},
		{"shard 0 relabelled as shard 1",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T10:00:00.002Z", startAt: at, lateNs: 2_000_000, indices: []int{0, 2}}, nil,
			[]string{"request 0", "also in", "shard 0", "not one run"}, true},
		{"one request twice in a shard",
			shardFile{index: 1, count: 2, startWall: "2026-12-03T10:00:00.002Z", startAt: at, lateNs: 2_000_000, indices: []int{1, 3, 1}}, nil,
			[]string{"appears twice", "damaged"}, true},
		{"a start in year 1",
			shardFile{index: 1, count: 2, startWall: "0001-01-01T00:00:00Z", indices: []int{1, 3}},
			&shardFile{index: 0, count: 2, startWall: "2026-12-03T10:00:00Z", indices: []int{0, 2}},
			[]string{"0001-01-01T00:00:00Z", "damaged"}, true},
	}
	for i, c := range bad {
		sub := filepath.Join(dir, fmt.Sprint("case", i))
		os.Mkdir(sub, 0o755)
		first := s0
		if c.s0 != nil {
			first = writeShard(t, sub, "a.trace.zst", *c.s0)
		}
		second := writeShard(t, sub, "b.trace.zst", c.s1)
		out := filepath.Join(sub, "merged.trace.zst")
		o, e, code := run(t, nil, bin, "trace", "merge", first, second, "-o", out)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", c.name, code, o, e)
		}
		named := first
		if c.file1 {
			named = second
		}
		oneLine(t, c.name, e, append([]string{named}, c.want...)...)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the merged trace was written", c.name)
		}
	}
}
