package replay

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/trace"
)

// A server that is not there is said first, as a problem of the address
// (Config.URL), whatever was being asked of it; a refused run says so at
// its end.
func TestUnreachableLeadsWithTheAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close()
	c := &http.Client{}
	_, err = askModel(context.Background(), c, base, "openai-chat", "", func(s string) string { return s })
	fe := fielderr.As(err)
	if fe == nil || fe.Field != "URL" || !strings.Contains(fe.Problem, "connection refused: nothing listens on "+l.Addr().String()) {
		t.Errorf("model discovery against a closed port: %v", err)
	}
	if _, err := detectAPI(context.Background(), c, base, "", "chat", func(s string) string { return s }); fielderr.As(err) == nil || fielderr.As(err).Field != "URL" {
		t.Errorf("--api auto against a closed port: %v", err)
	}
	// An unknown host: named.
	why := unreachableWhy("http://nowhere.invalid:8000", &net.DNSError{Name: "nowhere.invalid", Err: "no such host"}, time.Second)
	if why != "the host nowhere.invalid is not known" {
		t.Errorf("DNS: %q", why)
	}
	// A cancelled run is not an unreachable server.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := unreachable(ctx, base, context.Canceled, time.Second); err != nil {
		t.Errorf("cancelled: %v", err)
	}
	s := &Summary{Sent: 4, Failed: 4, ByClass: map[trace.ErrorClass]int{trace.ErrRefused: 4}, Trace: "t.trace.zst"}
	if err := s.NoneSucceeded(); err == nil || !strings.Contains(err.Error(), "every connection was refused") || !strings.Contains(err.Error(), "correct --url") {
		t.Errorf("refused run: %v", err)
	}
}
