package replay

import (
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
