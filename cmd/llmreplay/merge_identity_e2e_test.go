package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

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
