package replay

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/llmreplay/llmreplay/trace"
)

// reason records why the engine itself ended a request, so the error the
// HTTP stack returns (usually a bare "context canceled") can be told apart
// from a server that hung up.
type reason int

const (
	reasonNone reason = iota
	reasonIdle
	reasonTimeout
	reasonCancelled
)

// classify turns an error from dialing, writing or reading into an error
// class. gotBytes says whether any response byte had arrived: a timeout
// before that is "timeout-first", after it "idle-timeout".
func classify(err error, why reason, gotBytes bool) *trace.Error {
	if err == nil {
		return nil
	}
	var te *trace.Error
	if errors.As(err, &te) {
		return te
	}
	msg := cleanMessage(err)
	switch why {
	case reasonIdle:
		if !gotBytes {
			return &trace.Error{Class: trace.ErrTimeoutFirst, Message: "no response byte within the idle timeout"}
		}
		return &trace.Error{Class: trace.ErrIdleTimeout, Message: "no chunk within the idle timeout"}
	case reasonTimeout:
		if !gotBytes {
			return &trace.Error{Class: trace.ErrTimeoutFirst, Message: "no response byte within the request timeout"}
		}
		return &trace.Error{Class: trace.ErrTimeout, Message: "the request took longer than the request timeout"}
	case reasonCancelled:
		return &trace.Error{Class: trace.ErrCancelled, Message: "the run was stopped before the response ended"}
	}
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		recErr     tls.RecordHeaderError
		alertErr   tls.AlertError
		invalidErr x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &invalidErr),
		strings.Contains(msg, "tls: "):
		return &trace.Error{Class: trace.ErrTLS, Message: msg}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &trace.Error{Class: trace.ErrRefused, Message: msg}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		strings.Contains(msg, "connection reset"), strings.Contains(msg, "server closed"),
		strings.Contains(msg, "broken pipe"):
		return &trace.Error{Class: trace.ErrReset, Message: msg}
	case errors.Is(err, context.DeadlineExceeded):
		if !gotBytes {
			return &trace.Error{Class: trace.ErrTimeoutFirst, Message: msg}
		}
		return &trace.Error{Class: trace.ErrTimeout, Message: msg}
	case errors.Is(err, context.Canceled):
		return &trace.Error{Class: trace.ErrCancelled, Message: msg}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return &trace.Error{Class: trace.ErrRefused, Message: msg}
	}
	return &trace.Error{Class: trace.ErrOther, Message: msg}
}

// cleanMessage strips the request URL that net/http puts in front of errors
// (`Post "http://user:key@host/...": ...`): it may carry credentials, and the
// trace header already says where the requests went.
func cleanMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if len(msg) > 512 {
		msg = msg[:512]
	}
	return msg
}
