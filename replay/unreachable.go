package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// unreachable is the error of a server that gave no HTTP answer at all
// (nothing listens there, the host is unknown or unreachable, nothing came
// back in time) to a question asked before the run: the address is the
// problem, whatever was asked, so the error names --url first rather than
// the setting that needed the answer (--model, --api auto). It returns nil
// for any other failure (a TLS mismatch: a server is there) and for a
// cancelled run.
func unreachable(ctx context.Context, base string, err error, within time.Duration) error {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	why := unreachableWhy(base, err, within)
	if why == "" {
		return nil
	}
	return fieldErr("URL", fmt.Sprintf("%s: no server answers there (%s)", RedactURL(base), why), "start the server, or correct the address")
}

// unreachableWhy says in words why nothing answered at base, or "" when
// err is not a failure to reach it.
func unreachableWhy(base string, err error, within time.Duration) string {
	host := base
	if u, perr := url.Parse(base); perr == nil && u.Host != "" {
		host = u.Host
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens on " + host
	case errors.As(err, &dns):
		return fmt.Sprintf("the host %s is not known", dns.Name)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to " + host
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fmt.Sprintf("no answer from %s within %v", host, within)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "cannot connect to " + host + ": " + op.Err.Error()
	}
	return ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
