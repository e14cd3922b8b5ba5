package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmreplay/llmreplay/internal/cputime"
)

type got struct {
	Data    string
	Name    string
	ID      string
	Partial bool
}

func collect(t *testing.T, p *Parser) ([]got, error) {
	t.Helper()
	var out []got
	for p.Next() {
		ev := p.Event()
		out = append(out, got{string(ev.Data), ev.Name, string(ev.ID), ev.Partial})
		if len(out) > 1e6 {
			t.Fatal("runaway parser")
		}
	}
	return out, p.Err()
}

// framingCase is one table row of a framing test.
type framingCase struct {
	name  string
	in    string
	sizes []int // read sizes, cycled; nil = everything at once
	want  []got
}

// runFraming parses each case's input, read in its sizes, with the parser
// newParser makes, and compares the events with the case's.
func runFraming(t *testing.T, tests []framingCase, newParser func(io.Reader, func() int64, Options) *Parser) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &chunkReader{b: []byte(tt.in), sizes: tt.sizes}
			if tt.sizes == nil {
				cr.sizes = []int{len(tt.in) + 1}
			}
			evs, err := collect(t, newParser(cr, cr.now, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSE(t *testing.T) {
	runFraming(t, []framingCase{
		{"one event", "data: hello\n\n", nil, []got{{Data: "hello"}}},
		{"no space after colon (TGI)", "data:hello\n\n", nil, []got{{Data: "hello"}}},
		{"only one space is stripped", "data:  two\n\n", nil, []got{{Data: " two"}}},
		{"multi-line data joined with LF", "data: a\ndata: b\ndata:\n\n", nil, []got{{Data: "a\nb\n"}}},
		{"empty data still dispatches", "data:\n\n", nil, []got{{Data: ""}}},
		{"field without colon is an empty data line", "data\n\n", nil, []got{{Data: ""}}},
		{"comments are skipped", ": ping\n\n: hi\ndata: x\n: mid\n\n", nil, []got{{Data: "x"}}},
		{"event and id lines", "event: error\nid: 7\ndata: boom\n\ndata: next\n\n", nil,
			[]got{{Data: "boom", Name: "error", ID: "7"}, {Data: "next", ID: "7"}}},
		{"event without data is not dispatched", "event: ping\n\ndata: x\n\n", nil, []got{{Data: "x"}}},
		{"id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", nil,
			[]got{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}}},
		{"retry and unknown fields are not data", "retry: 10\nfoo: bar\ndata: a\n\n", nil, []got{{Data: "a"}}},
		{"CRLF", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", nil, []got{{Data: "a\nb"}, {Data: "c"}}},
		{"CR only", "data: a\rdata: b\r\rdata: c\r\r", nil, []got{{Data: "a\nb"}, {Data: "c"}}},
		{"CR then LF across reads is one break", "data: a\r\n\r\ndata: b\r\n\r\n", []int{8, 1, 1, 100},
			[]got{{Data: "a"}, {Data: "b"}}},
		{"split one byte per read", "event: e\ndata: {\"x\":1}\r\n\r\n", []int{1}, []got{{Data: `{"x":1}`, Name: "e"}}},
		{"several events in one read", "data: 1\n\ndata: 2\n\ndata: 3\n\n", nil, []got{{Data: "1"}, {Data: "2"}, {Data: "3"}}},
		{"BOM at the start is dropped", "\xEF\xBB\xBFdata: a\n\n", []int{1}, []got{{Data: "a"}}},
		{"BOM later is data", "data: \xEF\xBB\xBFa\n\n", nil, []got{{Data: "\xEF\xBB\xBFa"}}},
		{"NUL and invalid UTF-8 kept", "data: a\x00\xff\xfeb\n\n", nil, []got{{Data: "a\x00\xff\xfeb"}}},
		{"last event without blank line is partial", "data: a\n\ndata: b\n", nil, []got{{Data: "a"}, {Data: "b", Partial: true}}},
		{"last line without LF is partial", "data: a\n\ndata: b", nil, []got{{Data: "a"}, {Data: "b", Partial: true}}},
		{"trailing comment only", "data: a\n\n: bye", nil, []got{{Data: "a"}}},
		{"empty stream", "", nil, nil},
	}, NewSSE)
}

func TestNDJSON(t *testing.T) {
	runFraming(t, []framingCase{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", nil, []got{{Data: `{"a":1}`}, {Data: `{"b":2}`}}},
		{"CRLF trimmed", "{\"a\":1}\r\n{\"b\":2}\r\n", []int{1}, []got{{Data: `{"a":1}`}, {Data: `{"b":2}`}}},
		{"blank lines skipped", "\n  \n{}\n\r\n\n", nil, []got{{Data: `{}`}}},
		{"last line without LF is partial", "{}\n{\"done\":true}", []int{3}, []got{{Data: `{}`}, {Data: `{"done":true}`, Partial: true}}},
		{"a lone CR is not a line break", "{}\r{}\n", nil, []got{{Data: "{}\r{}"}}},
		{"SSE lines are just lines", "data: {}\n\n", nil, []got{{Data: "data: {}"}}},
	}, NewNDJSON)
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name   string
		start  Format
		in     string
		format Format
		want   []got
	}{
		{"SSE asked, NDJSON sent", SSE, "{\"a\":1}\n{\"b\":2}\n", NDJSON, []got{{Data: `{"a":1}`}, {Data: `{"b":2}`}}},
		{"NDJSON asked, SSE sent", NDJSON, "data: {\"a\":1}\n\n", SSE, []got{{Data: `{"a":1}`}}},
		{"leading blank lines", SSE, "\n\r\n  \n[1]\n", NDJSON, []got{{Data: "[1]"}}},
		{"SSE comment first", NDJSON, ": hi\ndata: x\n\n", SSE, []got{{Data: "x"}}},
		{"BOM then JSON", SSE, "\xEF\xBB\xBF{}\n", NDJSON, []got{{Data: "{}"}}},
		{"pretty JSON document is lines", SSE, "{\n  \"a\": 1\n}\n", NDJSON, []got{{Data: "{"}, {Data: `  "a": 1`}, {Data: "}"}}},
		{"only blanks", NDJSON, "\n\n \n", NDJSON, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 1000} {
				cr := &chunkReader{b: []byte(tt.in), sizes: []int{size}}
				p := &Parser{}
				p.Reset(cr, cr.now, tt.start, Options{Sniff: true})
				evs, err := collect(t, p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, evs); diff != "" {
					t.Errorf("reads of %d: events (-want +got):\n%s", size, diff)
				}
				if p.Format() != tt.format {
					t.Errorf("reads of %d: format %v, want %v", size, p.Format(), tt.format)
				}
			}
		})
	}
}

// TestTimestamps checks that each event carries the time of the read that
// delivered the byte that completed it, whatever the read boundaries.
func TestTimestamps(t *testing.T) {
	in := []byte("data: one\n\n: c\r\ndata: two\r\n\r\nevent: x\rdata: three\r\rdata: four\n")
	want, err := refSSE(in, DefaultMaxEventSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, sizes := range [][]int{{1}, {2}, {3, 7}, {10}, {29}, {1000}} {
		cr := &chunkReader{b: in, sizes: sizes}
		p := NewSSE(cr, cr.now, Options{})
		k, cum := 0, 0
		for p.Next() {
			ev := p.Event()
			if k >= len(want) {
				t.Fatalf("sizes %v: extra event %q", sizes, ev.Data)
			}
			cum += ev.Bytes
			if w := cr.readOf(want[k].Term); ev.T != w {
				t.Errorf("sizes %v: event %d (%q) T = read %d, want read %d", sizes, k, ev.Data, ev.T, w)
			}
			checkBytes(t, in, want[k], cum)
			k++
		}
		if k != len(want) || p.Err() != nil {
			t.Errorf("sizes %v: %d events, err %v; want %d", sizes, k, p.Err(), len(want))
		}
	}
}

func checkBytes(t *testing.T, in []byte, w refEvent, cum int) {
	t.Helper()
	lo, hi := w.Term+1, w.Term+1
	if w.Partial {
		lo, hi = len(in), len(in)
	} else if in[w.Term] == '\r' && w.Term+1 < len(in) && in[w.Term+1] == '\n' {
		hi++ // a CRLF is consumed whole when both bytes have arrived
	}
	if cum < lo || cum > hi {
		t.Errorf("event %q: bytes so far %d, want %d..%d", w.Data, cum, lo, hi)
	}
}

func TestTooLarge(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
	}{
		{"unterminated long line", "data: " + strings.Repeat("x", 100), 64},
		{"terminated long line", "data: " + strings.Repeat("x", 100) + "\n\n", 64},
		{"data lines adding up", strings.Repeat("data: "+strings.Repeat("x", 30)+"\n", 4) + "\n", 64},
		{"long blank prefix", strings.Repeat(" ", 200), 64},
	}
	for _, tt := range tests {
		for _, f := range []Format{SSE, NDJSON} {
			t.Run(fmt.Sprintf("%s/%v", tt.name, f), func(t *testing.T) {
				cr := &chunkReader{b: []byte(tt.in), sizes: []int{7}}
				p := &Parser{}
				p.Reset(cr, cr.now, f, Options{MaxEventSize: tt.max, BufferSize: 16, Sniff: tt.name == "long blank prefix"})
				evs, err := collect(t, p)
				if tt.name == "data lines adding up" && f == NDJSON {
					if err != nil || len(evs) != 4 {
						t.Fatalf("NDJSON lines under the limit: %d events, err %v", len(evs), err)
					}
					return
				}
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("err = %v, want ErrTooLarge (events %v)", err, evs)
				}
				if c := cap(p.buf); c > tt.max+2 {
					t.Errorf("buffer grew to %d bytes, limit %d", c, tt.max+2)
				}
			})
		}
	}
}

// TestHugeLine feeds more than the default limit through a real-sized stream
// and checks the parser stops at the limit instead of buffering it all.
func TestHugeLine(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: "), &zeros{n: DefaultMaxEventSize + 1<<20})
	p := NewSSE(r, func() int64 { return 0 }, Options{})
	for p.Next() {
		t.Fatal("an event from an oversized line")
	}
	if !errors.Is(p.Err(), ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", p.Err())
	}
	if c := cap(p.buf); c > DefaultMaxEventSize+2 {
		t.Errorf("buffer grew to %d bytes", c)
	}
}

type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	n := min(len(p), z.n)
	clear(p[:n])
	z.n -= n
	return n, nil
}

func TestReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), errReader{boom})
	p := NewSSE(r, func() int64 { return 0 }, Options{})
	evs, err := collect(t, p)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
	if len(evs) != 1 || evs[0].Data != "a" {
		t.Errorf("events %v, want only the complete one", evs)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestNoProgress(t *testing.T) {
	p := NewSSE(errReader{nil}, func() int64 { return 0 }, Options{})
	if p.Next() || !errors.Is(p.Err(), io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", p.Err())
	}
}

func TestIgnored(t *testing.T) {
	p := NewSSE(strings.NewReader("<html>\n<body>oops</body>\n"), func() int64 { return 0 }, Options{})
	for p.Next() {
		t.Fatal("event from HTML")
	}
	n, first := p.Ignored()
	if n != 2 || first != "<html>" {
		t.Errorf("Ignored() = %d, %q", n, first)
	}
	p = NewSSE(strings.NewReader("retry: 250\ndata: x\n\n"), func() int64 { return 0 }, Options{})
	for p.Next() {
	}
	if ms, ok := p.Retry(); !ok || ms != 250 {
		t.Errorf("Retry() = %d, %v", ms, ok)
	}
}

// TestHTTP reads a real response body whose one event arrives a byte at a
// time, flushed, with a pause before its last byte: the event's time must be
// after that last byte was sent.
func TestHTTP(t *testing.T) {
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	lastSent := make(chan int64, 1)
	const ev = "data: {\"choices\":[]}\r\n\r\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := 0; i < len(ev); i++ {
			if i == len(ev)-2 {
				time.Sleep(20 * time.Millisecond)
				lastSent <- now()
			}
			w.Write([]byte{ev[i]})
			f.Flush()
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := NewSSE(resp.Body, now, Options{})
	n := 0
	for p.Next() {
		n++
		e := p.Event()
		if string(e.Data) != `{"choices":[]}` || e.Bytes != len(ev)-1 && e.Bytes != len(ev) {
			t.Errorf("event %q, %d bytes", e.Data, e.Bytes)
		}
		if sent := <-lastSent; e.T < sent {
			t.Errorf("event time %d is before its dispatching byte was sent at %d", e.T, sent)
		}
	}
	if n != 1 || p.Err() != nil {
		t.Fatalf("%d events, err %v", n, p.Err())
	}
}

func TestFields(t *testing.T) {
	in := "data: a\nerror: {\"message\":\"x\"}\ndata: b\n\nerror:no space\r\nwarning: ignored\n\n"
	for _, size := range []int{1, 1000} {
		cr := &chunkReader{b: []byte(in), sizes: []int{size}}
		evs, err := collect(t, NewSSE(cr, cr.now, Options{Fields: []string{"error"}}))
		if err != nil {
			t.Fatal(err)
		}
		want := []got{{Data: `{"message":"x"}`, Name: "error"}, {Data: "a\nb"}, {Data: "no space", Name: "error"}}
		if diff := cmp.Diff(want, evs); diff != "" {
			t.Errorf("reads of %d: events (-want +got):\n%s", size, diff)
		}
	}
}

func TestReuse(t *testing.T) {
	p := NewSSE(strings.NewReader("event: a\ndata: 1\n\n"), func() int64 { return 0 }, Options{})
	for p.Next() {
	}
	p.Reset(strings.NewReader("{}\n"), func() int64 { return 5 }, NDJSON, Options{})
	if !p.Next() || string(p.Event().Data) != "{}" || p.Event().T != 5 || p.Event().Name != "" {
		t.Fatalf("after Reset: %+v", p.Event())
	}
}

func TestSSEReference(t *testing.T) {
	for _, in := range seedsSSE {
		for _, sizes := range [][]int{{1}, {2, 3}, {64}, {4096}} {
			checkSSE(t, []byte(in), sizes, DefaultMaxEventSize)
		}
	}
}

var seedsSSE = []string{
	"data: hello\n\n",
	"data:a\r\n\r\ndata:b\r\rdata:c\n\n",
	": c\nevent: e\nid: 1\ndata: x\ndata: y\n\n",
	"\xEF\xBB\xBFdata: bom\n\n",
	"data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
	"data: a\r",
	"\r\n\r\n\n\r",
	"data: partial",
}

var seedsNDJSON = []string{
	"{\"response\":\"a\",\"done\":false}\n{\"done\":true}\n",
	"{}\r\n\r\n{}",
	"\n\n  \n",
	"\xEF\xBB\xBF{}\n",
}

func checkSSE(t *testing.T, in []byte, sizes []int, max int) {
	t.Helper()
	want, wantErr := refSSE(in, max)
	cr := &chunkReader{b: in, sizes: sizes}
	p := NewSSE(cr, cr.now, Options{MaxEventSize: max, BufferSize: 8})
	compare(t, in, p, cr, want, wantErr)
}

func checkNDJSON(t *testing.T, in []byte, sizes []int, max int) {
	t.Helper()
	want, wantErr := refNDJSON(in, max)
	cr := &chunkReader{b: in, sizes: sizes}
	p := NewNDJSON(cr, cr.now, Options{MaxEventSize: max, BufferSize: 8})
	compare(t, in, p, cr, want, wantErr)
}

func compare(t *testing.T, in []byte, p *Parser, cr *chunkReader, want []refEvent, wantErr error) {
	t.Helper()
	k, cum := 0, 0
	for p.Next() {
		ev := p.Event()
		if k >= len(want) {
			t.Fatalf("input %q reads %v: extra event %q", in, cr.sizes, ev.Data)
		}
		w := want[k]
		if string(ev.Data) != w.Data || ev.Name != w.Name || string(ev.ID) != w.ID || ev.Partial != w.Partial {
			t.Fatalf("input %q reads %v: event %d = {%q %q %q %v}, want {%q %q %q %v}", in, cr.sizes, k,
				ev.Data, ev.Name, ev.ID, ev.Partial, w.Data, w.Name, w.ID, w.Partial)
		}
		if r := cr.readOf(w.Term); ev.T != r {
			t.Fatalf("input %q reads %v: event %d T = %d, want %d", in, cr.sizes, k, ev.T, r)
		}
		cum += ev.Bytes
		checkBytes(t, in, w, cum)
		k++
	}
	if k != len(want) {
		t.Fatalf("input %q reads %v: %d events, want %d (err %v)", in, cr.sizes, k, len(want), p.Err())
	}
	if (wantErr != nil) != (p.Err() != nil) {
		t.Fatalf("input %q reads %v: err %v, reference err %v", in, cr.sizes, p.Err(), wantErr)
	}
	if wantErr != nil && !errors.Is(p.Err(), ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", p.Err())
	}
	if wantErr == nil && cum > len(in) {
		t.Fatalf("bytes add up to %d, stream has %d", cum, len(in))
	}
}

// sizesFrom turns fuzz bytes into a cycle of read sizes of 1..64.
func sizesFrom(b []byte) []int {
	if len(b) == 0 {
		return []int{1 << 20}
	}
	s := make([]int, 0, min(len(b), 32))
	for _, c := range b[:min(len(b), 32)] {
		s = append(s, 1+int(c)%64)
	}
	return s
}

func FuzzSSE(f *testing.F) { fuzzFraming(f, seedsSSE, []byte{3, 200}, 9, checkSSE) }

func FuzzNDJSON(f *testing.F) { fuzzFraming(f, seedsNDJSON, []byte{5, 17}, 4, checkNDJSON) }

// fuzzFraming seeds a framing's fuzz target with each seed read a byte at a
// time, and again in the reads split with the event bound lim; the fuzzer
// varies the input, the read sizes and the bound (0: the default), and
// check holds the parser against its reference.
func fuzzFraming(f *testing.F, seeds []string, split []byte, lim uint8, check func(t *testing.T, in []byte, sizes []int, max int)) {
	for _, s := range seeds {
		f.Add([]byte(s), []byte{1}, uint8(0))
		f.Add([]byte(s), split, lim)
	}
	f.Fuzz(func(t *testing.T, in, split []byte, lim uint8) {
		max := DefaultMaxEventSize
		if lim > 0 {
			max = int(lim)
		}
		check(t, in, sizesFrom(split), max)
	})
}

func TestNDJSONReference(t *testing.T) {
	for _, in := range seedsNDJSON {
		for _, sizes := range [][]int{{1}, {2, 3}, {4096}} {
			checkNDJSON(t, []byte(in), sizes, DefaultMaxEventSize)
		}
	}
}

// vllmChunk is a typical vLLM chat-completion chunk carrying one token.
const vllmChunk = `data: {"id":"chatcmpl-8d0f6c5e2b7a4a1f9d3c2b1a0e9f8d7c","object":"chat.completion.chunk","created":1733140000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}` + "\n\n"

// eventReader returns one event per Read, the way a streaming server's
// flushes usually arrive, without end.
type eventReader struct{ ev []byte }

func (e *eventReader) Read(p []byte) (int, error) { return copy(p, e.ev), nil }

func BenchmarkSSEParse(b *testing.B) {
	r := &eventReader{ev: []byte(vllmChunk)}
	var clock int64
	p := NewSSE(r, func() int64 { clock++; return clock }, Options{})
	b.SetBytes(int64(len(vllmChunk)))
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cputime.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !p.Next() {
			b.Fatal(p.Err())
		}
	}
	b.StopTimer()
	cpu := cputime.Process() - cpu0
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "allocs/event")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
	}
	if !bytes.HasPrefix(p.Event().Data, []byte(`{"id"`)) {
		b.Fatal("wrong data")
	}
}

// TestTrickle feeds a long line one byte per read: the parser must not
// search the whole pending line again on every read.
func TestTrickle(t *testing.T) {
	const n = 1 << 20
	in := "data: " + strings.Repeat("x", n) + "\n\n"
	for _, f := range []Format{SSE, NDJSON} {
		cr := &chunkReader{b: []byte(in), sizes: []int{1}}
		p := &Parser{}
		p.Reset(cr, cr.now, f, Options{Sniff: f == NDJSON})
		start := time.Now()
		if !p.Next() || len(p.Event().Data) < n {
			t.Fatalf("%v: %v", f, p.Err())
		}
		// Linear is a few tens of milliseconds; quadratic would be minutes.
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v: %v for a 1 MiB line a byte at a time", f, d)
		}
	}
}
