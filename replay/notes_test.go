package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// TestNotesLateStart: a run that starts more than LateStart past its
// start time says how late, naming the time as the user gave it; within
// LateStart, or without a start time, it says nothing.
func TestNotesLateStart(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	header := func(late time.Duration) trace.Header {
		return trace.Header{StartWall: at.Add(late).Format(time.RFC3339Nano)}
	}
	for _, c := range []struct {
		startAt time.Time
		startIn time.Duration
		late    time.Duration
		want    string // "" for silence
	}{
		{at, 0, 500 * time.Millisecond, ""},
		{at, 0, 2345 * time.Millisecond, "warning: --start-at 2026-12-03T10:00:00Z passed 2.35s ago: this run starts now"},
		{at, 0, 90*time.Second + 400*time.Millisecond, "passed 1m30s ago"},
		{at, time.Minute, 3 * time.Second, "warning: the start time 2026-12-03T10:00:00Z (--start-in 1m0s) passed 3s ago"},
		{time.Time{}, 0, time.Hour, ""},
	} {
		var b strings.Builder
		n := &Notes{W: &b, StartAt: c.startAt, StartIn: c.startIn}
		if err := n.Start(header(c.late)); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("late %v: said %q, want %q", c.late, got, c.want)
		}
	}
}

// TestNotesScrapeWarning: failed /metrics scrapes are said once at the
// end, all or some of them, with the last error escaped; a watched
// process's samples are not the server's metrics and are not counted.
func TestNotesScrapeWarning(t *testing.T) {
	scrape := func(n *Notes, errText string) {
		n.Scrape(&trace.Scrape{Source: trace.SourceMetrics, Target: "http://h/metrics", Error: errText})
	}
	var b strings.Builder
	n := &Notes{W: &b}
	scrape(n, "")
	n.Scrape(&trace.Scrape{Source: trace.SourceProcess, Error: "gone"})
	n.Warnings()
	if b.Len() != 0 {
		t.Errorf("warned with no failed scrape: %q", b.String())
	}
	scrape(n, "connection refused\x1b[2J")
	n.Warnings()
	if got := b.String(); !strings.HasPrefix(got, "warning: server metrics: 1 of 2 scrapes of http://h/metrics failed (last: connection refused") || strings.Contains(got, "\x1b") {
		t.Errorf("some failed: %q", got)
	}
	b.Reset()
	all := &Notes{W: &b}
	scrape(all, "timeout")
	scrape(all, "timeout")
	all.Warnings()
	if got := b.String(); !strings.HasPrefix(got, "warning: server metrics: all 2 scrapes of http://h/metrics failed (last: timeout): the trace has no server-side view") {
		t.Errorf("all failed: %q", got)
	}
}

// TestNoneSucceeded: a run that sent requests and had none succeed is an
// error naming the commonest error class (ties by name); one with any
// success, or that sent nothing, is not.
func TestNoneSucceeded(t *testing.T) {
	if err := (&Summary{Sent: 3, OK: 1}).NoneSucceeded(); err != nil {
		t.Errorf("one succeeded: %v", err)
	}
	if err := (&Summary{}).NoneSucceeded(); err != nil {
		t.Errorf("nothing sent: %v", err)
	}
	s := &Summary{Sent: 5, Failed: 5, Trace: "t.trace.zst", ByClass: map[trace.ErrorClass]int{"timeout": 2, "http-status": 2, "connect": 1}}
	want := "none of the 5 requests succeeded (2 failed with http-status): the trace t.trace.zst holds their errors; `llmreplay trace cat` shows them"
	if err := s.NoneSucceeded(); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestAnnounce: the lines a run says before it starts, with the server's
// text escaped (the sampling interval left zero is the default 250 ms);
// AnnounceAPI alone says only the API's.
func TestAnnounce(t *testing.T) {
	var b strings.Builder
	var c Config
	c.Announce(&b)
	c.OnAPI(Detection{API: "openai-chat", Why: "/version names vLLM"})
	c.OnServerMetrics(ServerMetricsStatus{Target: "http://h/metrics", Why: "404\x1b[1m"})
	c.OnWatch("process 42 (vllm)", false)
	want := "api: openai-chat, chosen by --api auto: /version names vLLM\n" +
		"server metrics: none at http://h/metrics (404\\x1b[1m); the run goes on without them\n" +
		"watching process 42 (vllm): memory, CPU time and threads every 250ms into the trace; no GPU memory (nvidia-smi not found)\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var only Config
	only.AnnounceAPI(&b)
	if only.OnServerMetrics != nil || only.OnWatch != nil || only.OnAPI == nil {
		t.Error("AnnounceAPI set more than OnAPI")
	}
}

// TestNotesNotStreamed: responses whose text came in one chunk are said
// at the end, counted among the successful measured responses with text;
// a short answer in one chunk, a warm-up, a failure and a streamed answer
// are not.
func TestNotesNotStreamed(t *testing.T) {
	var b strings.Builder
	n := &Notes{W: &b}
	whole := trace.Record{Chunks: []trace.Chunk{{Text: ""}, {Text: "the whole answer at once, at the end"}}}
	streamed := trace.Record{Chunks: []trace.Chunk{{Text: "the whole answer"}, {Text: " in pieces"}}}
	short := trace.Record{Chunks: []trace.Chunk{{Text: "Yes."}}}
	warm := whole
	warm.Warmup = true
	failed := whole
	failed.Error = &trace.Error{Class: trace.ErrRefused}
	for _, r := range []*trace.Record{&whole, &whole, &streamed, &short, &warm, &failed} {
		n.Record(r)
	}
	n.Warnings()
	if got := b.String(); !strings.HasPrefix(got, "warning: 2 of 4 responses came in one piece, not streamed:") || strings.Count(got, "\n") != 1 {
		t.Errorf("got %q", got)
	}
	b.Reset()
	quiet := &Notes{W: &b}
	quiet.Record(&streamed)
	quiet.Warnings()
	if b.Len() != 0 {
		t.Errorf("warned of a streamed answer: %q", b.String())
	}
}
