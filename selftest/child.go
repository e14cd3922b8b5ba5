package selftest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/llmreplay/llmreplay/sim"
)

// urlPrefix starts the one line a simulator child prints once it listens.
const urlPrefix = "LLMREPLAY_SELFTEST_SIM_URL="

// ServeChild is the simulator side of the harness, run in a child process
// so that the parent's getrusage counts the client alone. It serves the
// fast profile on a free loopback port, prints urlPrefix+URL on stdout and
// serves until stdin reaches EOF (the parent closed it or died).
//
// Flags: -pace DURATION (sim.Config.TokenInterval), -first-token DURATION
// (sim.Config.FirstTokenDelay), -send-times,
// -tokenizer SPEC, -tls (serve HTTPS with a self-signed certificate made
// at start; the URL is then https://).
func ServeChild(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("selftest sim-child", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pace := fs.Duration("pace", 0, "per-token pacing")
	firstToken := fs.Duration("first-token", 0, "hold each stream's first token this long (sim.Config.FirstTokenDelay)")
	sendTimes := fs.Bool("send-times", false, "stamp every chunk with its send time")
	tokenizer := fs.String("tokenizer", "", "tokenizer spec")
	useTLS := fs.Bool("tls", false, "serve HTTPS with a self-signed certificate")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("selftest sim-child: %w: use -pace DURATION -first-token DURATION -send-times -tokenizer SPEC -tls", err)
	}
	// The server holds as many sockets as the client; it needs the same
	// head-room.
	raiseNoFile()
	p, err := sim.LookupProfile("fast")
	if err != nil {
		return err
	}
	s, err := sim.New(sim.Config{Profile: p, SendTimes: *sendTimes, TokenInterval: *pace, FirstTokenDelay: *firstToken, Tokenizer: *tokenizer})
	if err != nil {
		return err
	}
	defer s.Close()
	url := ""
	if *useTLS {
		stop, u, err := serveTLS(s)
		if err != nil {
			return err
		}
		defer stop()
		url = u
	} else {
		if err := s.Start("127.0.0.1:0"); err != nil {
			return err
		}
		url = s.URL()
	}
	if _, err := fmt.Fprintf(stdout, "%s%s\n", urlPrefix, url); err != nil {
		return err
	}
	io.Copy(io.Discard, stdin)
	return nil
}

// serveTLS serves the simulator's routes over TLS on a free loopback port,
// with a certificate made now for 127.0.0.1 (ECDSA P-256, valid a day;
// the client is told to accept it, as replay --insecure does for a
// self-signed test server). HTTP/1.1 only, as the client speaks. stop ends
// the server after the simulator has ended its streams.
func serveTLS(s *sim.Server) (stop func(), url string, err error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, "", fmt.Errorf("selftest sim-child: making a TLS certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("selftest sim-child: listen: %w", err)
	}
	srv := &http.Server{
		Handler: s.Handler(), ReadHeaderTimeout: sim.HeaderTimeout, // as sim.Server.Start's
		TLSConfig:    &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	go srv.Serve(tls.NewListener(ln, srv.TLSConfig))
	return func() {
		s.Close() // ends the streams still running, so Close below returns
		srv.Close()
	}, "https://" + ln.Addr().String(), nil
}

// selfSigned makes a certificate for 127.0.0.1 signed by its own key.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "llmreplay selftest simulator"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// childSpec says how to start a simulator child: Argv, to which the
// harness appends ServeChild's flags, and extra environment; TLS makes it
// serve HTTPS.
type childSpec struct {
	Argv       []string
	Env        []string
	TLS        bool
	FirstToken time.Duration // -first-token; 0: none
}

// child is a running simulator child process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	url    string
	stderr *lockedBuffer
	exited chan struct{} // closed when the child has been waited for
	err    error         // its exit error, valid after exited
}

// lockedBuffer collects the child's stderr for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(l.b.String())
}

// startChild runs a simulator child and waits for its URL.
func startChild(ctx context.Context, spec childSpec, pace time.Duration, sendTimes bool, tokenizer string) (*child, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("selftest: no command to start the simulator child: set Config.Child")
	}
	args := append([]string(nil), spec.Argv[1:]...)
	args = append(args, "-pace", pace.String(), "-tokenizer", tokenizer)
	if sendTimes {
		args = append(args, "-send-times")
	}
	if spec.TLS {
		args = append(args, "-tls")
	}
	if spec.FirstToken > 0 {
		args = append(args, "-first-token", spec.FirstToken.String())
	}
	cmd := exec.Command(spec.Argv[0], args...)
	cmd.Env = append(cmd.Environ(), spec.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("selftest: starting the simulator child %s: %w", spec.Argv[0], err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), urlPrefix); ok {
				urls <- u
				break
			}
		}
		io.Copy(io.Discard, stdout)
		c.err = cmd.Wait()
		close(c.exited)
	}()
	select {
	case c.url = <-urls:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("selftest: the simulator child exited before listening (%v): %s", c.err, c.stderr)
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	c.kill()
	return nil, fmt.Errorf("selftest: the simulator child did not start listening: %s", c.stderr)
}

// cpu is the child's user+system CPU time so far (0 where unknown).
func (c *child) cpu() time.Duration { return procCPU(c.cmd.Process.Pid) }

// stop closes the child's stdin, which ends it, and waits for it.
func (c *child) stop() error {
	c.stdin.Close()
	select {
	case <-c.exited:
		if c.err != nil {
			return fmt.Errorf("selftest: the simulator child failed: %v: %s", c.err, c.stderr)
		}
		return nil
	case <-time.After(15 * time.Second):
		c.kill()
		return errors.New("selftest: the simulator child did not stop within 15 s of its stdin closing; killed it")
	}
}

// kill ends the child at once unless it has exited already.
func (c *child) kill() {
	c.stdin.Close()
	select {
	case <-c.exited:
		return
	default:
	}
	c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
	}
}
