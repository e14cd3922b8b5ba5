package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

func TestRedactString(t *testing.T) {
	const key = "sk-FRAGMENT-0123456789abcdefABCDEF" // 34 characters
	esc := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteString(`\u00`)
			b.WriteString(strings.ToLower(string("0123456789ABCDEF"[r>>4]) + string("0123456789ABCDEF"[r&15])))
		}
		return b.String()
	}
	for _, c := range []struct{ in, want string }{
		{"bad key " + key + "!", "bad key REDACTED!"},
		{"no secret here, sk-other-thing", "no secret here, sk-other-thing"},
		// Cut by a clip: the first 31 characters, and the last 20.
		{"provided: " + key[:31], "provided: REDACTED"},
		{key[14:] + " and more", "REDACTED and more"},
		// Shorter than minFragment at an edge: ordinary text.
		{"tail " + key[:7], "tail " + key[:7]},
		// Twice, and overlapping runs merge into one marker.
		{key + key, "REDACTED"},
		{key + " / " + key[3:20], "REDACTED / REDACTED"},
		// \u-escaped (a JSON body): decoded, redacted.
		{`{"message":"bad key ` + esc(key) + `"}`, `{"message":"bad key REDACTED"}`},
		// Escapes that hide nothing are left alone.
		{`{"message":"line\nbreak \u00e9"}`, `{"message":"line\nbreak \u00e9"}`},
	} {
		if got := redactString(c.in, []string{key}); got != c.want {
			t.Errorf("redactString(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestRedactChunks: a key split across streamed chunks is found in their
// joined text and cut out of every chunk it spans; the marker goes in the
// chunk where it starts, and wire bytes are left as they were.
func TestRedactChunks(t *testing.T) {
	const key = "sk-FRAGMENT-0123456789abcdefABCDEF"
	rec := &trace.Record{Chunks: []trace.Chunk{
		{Text: "1, " + key[:17], Bytes: 100},
		{Text: key[17:] + ", 2 " + key[:5], Bytes: 101},
		{Text: key[5:], Bytes: 102},
		{Text: ", 3", Bytes: 103},
	}}
	redactRecord(rec, []string{key})
	want := []string{"1, REDACTED", ", 2 REDACTED", "", ", 3"}
	for i, c := range rec.Chunks {
		if c.Text != want[i] || c.Bytes != 100+i {
			t.Errorf("chunk %d: %q (%d bytes), want %q (%d)", i, c.Text, c.Bytes, want[i], 100+i)
		}
	}
}

// FuzzRedact: whatever surrounds the key, however it is cut or escaped,
// no run of minFragment bytes of it survives, and text without it is left
// as it was.
func FuzzRedact(f *testing.F) {
	const key = "sk-FRAGMENT-0123456789abcdefABCDEF"
	f.Add("before ", "after", 0, 34, false)
	f.Add("", "", 3, 20, true)
	f.Add(`{"m":"`, `"}`, 10, 34, true)
	f.Fuzz(func(t *testing.T, pre, post string, lo, hi int, escape bool) {
		lo, hi = min(max(lo, 0), len(key)), min(max(hi, 0), len(key))
		if lo > hi {
			lo, hi = hi, lo
		}
		frag := key[lo:hi]
		if escape {
			var b strings.Builder
			for _, r := range frag {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&15])
			}
			frag = b.String()
		}
		in := pre + frag + post
		out := redactString(in, []string{key})
		for _, s := range []string{out, unescapeJSON(out)} {
			if sp := secretSpans(s, []string{key}); len(sp) > 0 {
				t.Fatalf("redactString(%q) = %q still holds %q", in, out, s[sp[0][0]:sp[0][1]])
			}
		}
		if len(secretSpans(in, []string{key})) == 0 && len(secretSpans(unescapeJSON(in), []string{key})) == 0 && out != in {
			t.Fatalf("redactString(%q) changed text without the key: %q", in, out)
		}
	})
}

// TestRedactScrape: a scrape's metric names, label values and error lose
// every run of the key; a scrape without it is left as it was.
func TestRedactScrape(t *testing.T) {
	const key = "sk-proj-0123456789abcdef"
	sc := trace.Scrape{Target: "http://h/metrics", Error: "bad line near " + key[4:],
		Samples: []trace.Sample{{Name: "tokens_" + key, Labels: `le="+Inf"`}, {Name: "running", Labels: `api_key="` + key + `",model="m"`}, {Name: "plain", Labels: `x="y"`}}}
	redactScrape(&sc, []string{key})
	want := trace.Scrape{Target: "http://h/metrics", Error: "bad line near REDACTED",
		Samples: []trace.Sample{{Name: "tokens_REDACTED", Labels: `le="+Inf"`}, {Name: "running", Labels: `api_key="REDACTED",model="m"`}, {Name: "plain", Labels: `x="y"`}}}
	if fmt.Sprint(sc) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", sc, want)
	}
}
