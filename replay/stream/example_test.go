package stream_test

import (
	"fmt"
	"strings"

	"github.com/llmreplay/llmreplay/replay/stream"
)

func ExampleNewSSE() {
	body := strings.NewReader(": keep-alive\n\ndata:{\"n\":1}\r\n\r\nevent: done\ndata: a\ndata: b\n\n")
	var clock int64
	now := func() int64 { clock++; return clock } // the run's monotonic clock
	p := stream.NewSSE(body, now, stream.Options{})
	for p.Next() {
		ev := p.Event()
		fmt.Printf("%q %q read=%d bytes=%d\n", ev.Name, ev.Data, ev.T, ev.Bytes)
	}
	if err := p.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "" "{\"n\":1}" read=1 bytes=30
	// "done" "a\nb" read=1 bytes=29
}
