package trace

import (
	"strings"
	"testing"
)

// TestMergeTextSaysWhatWasMerged: the merge's report names the shards of
// how many, the records, the shards left out and the clock's alignment.
func TestMergeTextSaysWhatWasMerged(t *testing.T) {
	r := &MergeResult{Records: 7, AlignErrorNs: 2_000_000, Warnings: []string{"w1"}}
	r.Header.Shards = []Shard{{Index: 0, Count: 3}}
	r.Header.ShardsMissing = []int{1, 2}
	var b strings.Builder
	r.WriteText(&b, "m.trace.zst")
	want := "warning: w1\nmerged 1 shard of 3 (7 records) into m.trace.zst\nmissing shards: [1 2] (merged without them: --allow-missing)\n" +
		"clock alignment: worst case ±2ms between hosts (affects phase windows and aggregate tok/s, not per-request metrics)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if a := (&MergeResult{}).Alignment(); !strings.HasPrefix(a, "exact") {
		t.Errorf("one host's shards: %q", a)
	}
	if a := (&MergeResult{AlignUnknown: true}).Alignment(); !strings.HasPrefix(a, "unknown") {
		t.Errorf("a clock without an estimate: %q", a)
	}
}
