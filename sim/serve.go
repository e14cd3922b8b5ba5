package sim

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// Prepare makes the simulator a person asks for: c with the profile
// named profile, run timeScale times its pace, to listen on addr. Every
// error is a setting that cannot be used (fielderr names its field where
// it is one of these).
func Prepare(c Config, addr, profile string, timeScale float64) (*Server, error) {
	p, err := LookupProfile(profile)
	if err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fielderr.Newf("sim", "Addr", "{Addr} %q is not host:port: use for example 127.0.0.1:8080", addr)
	}
	if !(timeScale > 0 && timeScale <= 1) {
		return nil, fielderr.Newf("sim", "TimeScale", "{TimeScale} %g: use a factor above 0 and at most 1 (0.1 runs ten times faster)", timeScale)
	}
	c.Profile = p.Scaled(timeScale)
	return New(c)
}

// Serve listens on addr (Prepare's) and serves until ctx ends, saying on
// out where and as what, and on notes when addr is reachable from other
// machines: the simulator has no authentication.
func (s *Server) Serve(ctx context.Context, addr string, out, notes io.Writer) error {
	if err := s.Start(addr); err != nil {
		s.Close()
		return err
	}
	if host, _, _ := net.SplitHostPort(addr); !Loopback(host) {
		fmt.Fprintf(notes, "WARNING: the simulator listens on %s, which is reachable from other machines; it has no authentication. Use --addr 127.0.0.1:PORT unless you mean it.\n", addr)
	}
	fmt.Fprintf(out, "llmreplay sim: SIMULATED server (profile %s, not a real engine) at %s\n", s.prof.Name, s.URL())
	if f := s.cfg.Faults(); f != "" {
		fmt.Fprintf(out, "faults: %s\n", f)
	}
	fmt.Fprintln(out, "Press Ctrl-C to stop.")
	<-ctx.Done()
	fmt.Fprintln(out, "llmreplay sim: stopping")
	return s.Close()
}
