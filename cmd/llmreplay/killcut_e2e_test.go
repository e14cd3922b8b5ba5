package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// zstdBoundaries walks a zstd file's frames and blocks (RFC 8878 §3.1)
// and returns the offsets where a block ends (inside a frame) and where a
// frame ends: every place a writer's flush could have left the file.
func zstdBoundaries(t *testing.T, data []byte) (blocks, frames []int) {
	t.Helper()
	i := 0
	for i < len(data) {
		if len(data)-i < 4 {
			t.Fatalf("zstd: %d stray bytes at %d", len(data)-i, i)
		}
		magic := binary.LittleEndian.Uint32(data[i:])
		if magic&0xfffffff0 == 0x184d2a50 { // a skippable frame
			i += 8 + int(binary.LittleEndian.Uint32(data[i+4:]))
			frames = append(frames, i)
			continue
		}
		if magic != 0xfd2fb528 {
			t.Fatalf("zstd: no frame magic at %d", i)
		}
		fhd := data[i+4]
		i += 5
		single := fhd&0x20 != 0
		if !single {
			i++ // window descriptor
		}
		i += []int{0, 1, 2, 4}[fhd&3] // dictionary id
		switch fhd >> 6 {             // frame content size
		case 0:
			if single {
				i++
			}
		case 1:
			i += 2
		case 2:
			i += 4
		case 3:
			i += 8
		}
		for {
			h := int(data[i]) | int(data[i+1])<<8 | int(data[i+2])<<16
			size := h >> 3
			if (h>>1)&3 == 1 { // RLE: one byte repeated
				size = 1
			}
			i += 3 + size
			if h&1 != 0 {
				break
			}
			blocks = append(blocks, i)
		}
		if fhd&4 != 0 {
			i += 4 // checksum
		}
		frames = append(frames, i)
	}
	return blocks, frames
}

// A run killed exactly between two flushes: a real trace, recorded through
// the binary, cut where one of its flushes ended while requests were in
// flight. Up to trace 1.5 such a cut fell between two frames and read as a
// whole trace whose missing requests were "never sent", as after Ctrl-C.
// Now trace info and analyze say it was cut off, and how many requests
// were in flight and lost: the last progress entry counts those sent.
func TestKilledBetweenFlushesThroughTheBinary(t *testing.T) {
	bin := parallelBinary(t)
	// Two bursts of 4 requests of 30 tokens, 1.8 s each: the flushes every
	// second fall while a burst is in flight.
	dir, _, tr := replaySim(t, bin, []string{"--profile", "fast", "--token-interval", "60ms"}, "--max-tokens", "30", "--schedule", "burst:4", "--repeats", "2")
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	blocks, frames := zstdBoundaries(t, data)
	if len(frames) != 1 || frames[0] != len(data) {
		t.Fatalf("frames end at %v in a %d-byte trace: want one frame, the whole file", frames, len(data))
	}
	// The first flush with requests in flight: more sent than recorded.
	cut, inFlight, records := -1, int64(0), int64(0)
	for _, b := range blocks {
		r, err := trace.NewReader(bytes.NewReader(data[:b]))
		if err != nil {
			continue // the header's own block
		}
		n := int64(0)
		for r.Scan() {
			n++
		}
		if p, ok := r.Progress(); ok && r.Truncated() && p.Sent > n {
			cut, inFlight, records = b, p.Sent-n, n
			break
		}
	}
	if cut < 0 {
		t.Fatalf("no flush of the run (block ends %v) found requests in flight", blocks)
	}
	cutPath := filepath.Join(dir, "cut.trace.zst")
	if err := os.WriteFile(cutPath, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	info, e := mustRun(t, bin, "trace", "info", cutPath)
	want := []string{
		"cut off after " + strconv.FormatInt(records, 10) + " of 8 requests",
		"at least " + strconv.FormatInt(inFlight, 10) + " " + map[bool]string{true: "was", false: "were"}[inFlight == 1] + " in flight and lost",
		"note:       the trace ends in a cut-short tail",
	}
	for _, w := range want {
		if !strings.Contains(info, w) {
			t.Errorf("trace info of the cut trace lacks %q:\n%s", w, info)
		}
	}
	if strings.Contains(info, "never sent\n") && !strings.Contains(info, "at most") {
		t.Errorf("trace info calls requests in flight never sent:\n%s", info)
	}
	out, e, _ := run(t, nil, bin, "analyze", cutPath)
	if !strings.Contains(out+e, "in flight and lost") {
		t.Errorf("analyze of the cut trace does not say requests were in flight:\n%s\n%s", out, e)
	}
	// The whole file is complete: nothing partial, nothing cut.
	info, _, _ = run(t, nil, bin, "trace", "info", tr)
	if strings.Contains(info, "partial:") || strings.Contains(info, "cut-short") {
		t.Errorf("trace info of the whole trace:\n%s", info)
	}
}

// A duplicated frame. A 1.6 trace is one frame: written twice (or two
// traces joined with cat) its second copy starts with a second header,
// and the reader stops there with an error that says so, keeping the
// first copy's records, which analyze counts once. A 1.5 trace has a
// frame per flush: with one repeated, its records appear twice; the
// repeats are skipped and said, and analyze counts each request once.
func TestDuplicatedFrameThroughTheBinary(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()

	// 1.6, the committed golden: 19 records.
	golden, err := os.ReadFile(filepath.Join("..", "..", "traces", "v1", "golden-1.6.trace.zst"))
	if err != nil {
		t.Fatal(err)
	}
	joined := filepath.Join(dir, "joined.trace.zst")
	if err := os.WriteFile(joined, append(append([]byte(nil), golden...), golden...), 0o644); err != nil {
		t.Fatal(err)
	}
	info, e, code := run(t, nil, bin, "trace", "info", joined)
	if code == 0 || !strings.Contains(e, "a second trace header follows record 19") || !strings.Contains(info, "records:    19 ") {
		t.Errorf("trace info of a trace written twice: exit %d, stderr %q:\n%s", code, e, info)
	}
	out, e, _ := run(t, nil, bin, "analyze", joined, "--format", "json")
	if !strings.Contains(out+e, "a second trace header") || !strings.Contains(out, `"records": 19`) {
		t.Errorf("analyze of a trace written twice:\n%s\n%s", out, e)
	}

	// 1.5: repeat the frame before its last.
	old, err := os.ReadFile(filepath.Join("..", "..", "traces", "v1", "golden-1.5.trace.zst"))
	if err != nil {
		t.Fatal(err)
	}
	_, frames := zstdBoundaries(t, old)
	if len(frames) < 4 {
		t.Fatalf("golden 1.5 has %d frames, want several", len(frames))
	}
	k := len(frames) - 2
	from, to := frames[k-1], frames[k]
	dup := append(append(append([]byte(nil), old[:to]...), old[from:to]...), old[to:]...)
	dupPath := filepath.Join(dir, "dup-1.5.trace.zst")
	if err := os.WriteFile(dupPath, dup, 0o644); err != nil {
		t.Fatal(err)
	}
	info, e, code = run(t, nil, bin, "trace", "info", dupPath)
	if code != 0 || !strings.Contains(info, "records:    17 ") || !strings.Contains(info, "appears twice") {
		t.Errorf("trace info of a 1.5 trace with a frame repeated: exit %d %s:\n%s", code, e, info)
	}
	out, e, _ = run(t, nil, bin, "analyze", dupPath, "--format", "json")
	if !strings.Contains(out+e, "appears twice") || !strings.Contains(out, `"records": 17`) {
		t.Errorf("analyze of a 1.5 trace with a frame repeated:\n%s\n%s", out, e)
	}
}
