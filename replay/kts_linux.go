package replay

import (
	"encoding/binary"
	"errors"
	"io"
	"iter"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelStampFlags asks for software receive stamps and for their report
// in recvmsg's control messages (both bits are needed).
const kernelStampFlags = unix.SOF_TIMESTAMPING_RX_SOFTWARE | unix.SOF_TIMESTAMPING_SOFTWARE

// oobSize holds one SCM_TIMESTAMPING message (three timespecs) and one
// TCP_CM_INQ (an int); a larger control message arrives with MSG_CTRUNC
// and the read counts as stampless.
var oobSize = unix.CmsgSpace(int(unsafe.Sizeof(unix.ScmTimestamping{}))) + unix.CmsgSpace(4)

// kread reads a connection through recvmsg, inside one long-lived
// RawConn.Read per connection run as a coroutine (iter.Pull): each Read
// of the connection resumes it for one recvmsg.
//
// Why: Go's poller clears a socket's readiness at the start of every
// RawConn.Read (pollReset), so a reader that returned to its caller
// between two reads must try the socket before it may wait; at a paced
// stream's one event per read that try found the socket drained (EAGAIN)
// 0.78 times per chunk, a system call of 2.6–4 µs on a paravirtualised
// guest (docs/PERFORMANCE.md). Inside one RawConn.Read nothing clears the
// readiness: after a recvmsg that returned less than its buffer with
// nothing left queued (TCP's recvmsg copies every queued byte up to the
// buffer's size, and TCP_INQ reports what is left, or 1 once the peer's
// FIN is in, which a recvmsg that returned bytes leaves for the next), the
// next read waits for the poller without trying, and any byte that
// arrived since has set the readiness the wait consumes (one that arrived
// while the recvmsg ran costs one spurious try, as before). The caller's
// stack cannot stay inside the callback, so the callback runs in a
// coroutine: a switch there and back costs a fraction of a microsecond,
// not a system call.
//
// What no flag reports: a reset (RST) that came right behind the last
// bytes, before the poller looked, raises no readiness of its own once
// those bytes are read. So a wait without a try is bounded by a read
// deadline (checkAfter): when it passes, the socket is tried, and a reset
// shows within that bound (the old reader saw it at once). A deadline set
// by the connection's user replaces this one (watchedConn's
// SetReadDeadline) and ends reads as it always did.
type kread struct {
	rc   syscall.RawConn
	conn net.Conn
	oob  []byte
	// loop is the function RawConn.Read calls (kread.readLoop) and run
	// the coroutine's body, both bound once per connection: a closure
	// made per read escapes to the heap with every variable it writes.
	// p is the buffer of the read in progress, n … rerr its results, ns
	// and why its stamp or why it has none (parseCmsgs), msg and iov the
	// recvmsg arguments kept with them (unix.Recvmsg allocates its
	// message header).
	loop           func(fd uintptr) bool
	run            func(yield func(struct{}) bool)
	p              []byte
	n, oobn, flags int
	rerr           error
	ns             int64
	why            string
	msg            unix.Msghdr
	iov            unix.Iovec
	// next resumes the coroutine for one read and stop ends it (nil: none
	// running); yield is the running coroutine's. drained: the last
	// recvmsg left the socket empty, so the next waits first. ended: the
	// coroutine's RawConn.Read returned, with rawErr.
	next    func() (struct{}, bool)
	stop    func()
	yield   func(struct{}) bool
	drained bool
	ended   bool
	rawErr  error
	// lastData is when a recvmsg last returned bytes, and deadline the
	// check deadline set (both unix ns; 0: none): see arm.
	lastData, deadline int64
	// tries counts recvmsg calls and checks the waits the check deadline
	// ended (what the tests count; written by the coroutine alone).
	tries, checks int64
	// mu orders Close and the user's deadlines against the coroutine: one
	// suspended between two reads holds the descriptor's read lock, so
	// Close must end it (the socket is closed only when that lock is let
	// go); one inside a read is woken by Close itself and ended by its
	// reader. userDeadline: the user set a read deadline, which then
	// replaces the check deadline.
	mu                            sync.Mutex
	reading, closed, userDeadline bool
}

// Bounds of the check deadline: a wait without a try lasts at least
// checkMin and at most checkMax before the socket is tried, within them
// twice the time since bytes last came (so a stream paced at 1 s is not
// woken between its events, and an idle connection a few times at most
// before it is tried every checkMax).
const (
	checkMin = 50 * time.Millisecond
	checkMax = 2 * time.Second
)

// recvmsg is one recvmsg into k.p, retried on EINTR, its results in k.
func (k *kread) recvmsg(fd uintptr) {
	k.tries++
	k.iov.Base = &k.p[0]
	k.iov.SetLen(len(k.p))
	for {
		k.msg = unix.Msghdr{Iov: &k.iov, Control: &k.oob[0]}
		k.msg.SetIovlen(1)
		k.msg.SetControllen(len(k.oob))
		r, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&k.msg)), 0)
		if e == unix.EINTR {
			continue
		}
		k.n, k.oobn, k.flags, k.rerr = int(r), int(k.msg.Controllen), int(k.msg.Flags), nil
		if e != 0 {
			k.n, k.rerr = 0, e
		}
		break
	}
	k.iov.Base = nil // the caller's buffer is not kept
}

// readLoop is the RawConn.Read callback: one recvmsg per resumption,
// handed to the reader by yield; false (wait for the poller) on EAGAIN, or
// before trying when the last read drained the socket; true (RawConn.Read
// returns) on an error, the end of the stream, or when stopped.
func (k *kread) readLoop(fd uintptr) bool {
	for {
		if k.drained {
			k.drained = false
			k.arm()
			return false
		}
		k.recvmsg(fd)
		if k.rerr == unix.EAGAIN {
			return false
		}
		if k.rerr != nil || k.n == 0 {
			return true // delivered by runLoop once RawConn.Read has returned
		}
		k.lastData = time.Now().UnixNano()
		inq := -1
		switch {
		case k.flags&unix.MSG_CTRUNC != 0:
			k.ns, k.why = 0, "the kernel's timestamp control message was truncated"
		default:
			k.ns, inq, k.why = parseCmsgs(k.oob[:k.oobn])
		}
		// Only a socket known empty is waited on without a try: without
		// TCP_INQ a FIN behind the bytes would raise no readiness either.
		k.drained = k.n < len(k.p) && inq == 0
		if !k.yield(struct{}{}) {
			return true
		}
	}
}

// arm makes sure a wait without a try ends within the check bound:
// it sets the read deadline when none is set or the one set is less than
// half the bound away (so most waits set none), unless the user set one.
func (k *kread) arm() {
	now := time.Now().UnixNano()
	bound := min(max(2*(now-k.lastData), int64(checkMin)), int64(checkMax))
	k.mu.Lock()
	if !k.userDeadline && (k.deadline == 0 || k.deadline-now < bound/2) {
		k.deadline = now + bound
		k.conn.SetReadDeadline(time.Unix(0, k.deadline))
	}
	k.mu.Unlock()
}

// runLoop is the coroutine: RawConn.Read until it returns, then that
// read's result (an error, the end of the stream) or RawConn.Read's own
// error (the connection closed, the user's deadline) once more. When the
// check deadline ended it, the socket is tried again in a new
// RawConn.Read.
func (k *kread) runLoop(yield func(struct{}) bool) {
	k.yield, k.drained = yield, false
	var err error
	for {
		err = k.rc.Read(k.loop)
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || !k.ownDeadline() {
			break
		}
		k.checks++
	}
	k.yield, k.ended, k.rawErr = nil, true, err
	if err != nil {
		k.n, k.rerr = 0, nil
	}
	yield(struct{}{})
}

// ownDeadline says whether a deadline that ended a read was the check
// deadline, and clears it so the socket is tried.
func (k *kread) ownDeadline() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.userDeadline || k.closed || k.deadline == 0 {
		return false
	}
	k.deadline = 0
	k.conn.SetReadDeadline(time.Time{})
	return true
}

// setUserDeadline records a read deadline the connection's user set (the
// zero time clears it) and sets it, in place of the check deadline.
func (k *kread) setUserDeadline(t time.Time, set func(time.Time) error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.userDeadline, k.deadline = !t.IsZero(), 0
	return set(t)
}

// readOnce is one read through the coroutine, started on the first read
// and again after one ended (a deadline, an error): false when the
// connection was closed.
func (k *kread) readOnce(p []byte) (rawErr error, open bool) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, false
	}
	k.reading = true
	k.mu.Unlock()
	if k.next == nil {
		k.next, k.stop = iter.Pull(k.run)
		k.ended = false
	}
	k.p = p
	if _, ok := k.next(); !ok {
		// The coroutine had already ended: cannot happen, as an ended
		// one is dropped below; read as if RawConn.Read said closed.
		k.ended, k.rawErr, k.n, k.rerr = true, net.ErrClosed, 0, nil
	}
	k.p = nil
	rawErr = k.rawErr
	k.mu.Lock()
	k.reading = false
	if k.ended || k.closed {
		k.stop()
		k.next, k.stop, k.rawErr = nil, nil, nil
	}
	k.mu.Unlock()
	return rawErr, true
}

// close ends a coroutine suspended between reads, before the connection
// is closed (watchedConn.Close), so that it lets the descriptor go; reads
// from now on say the connection is closed.
func (k *kread) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if !k.reading && k.next != nil {
		k.stop()
		k.next, k.stop = nil, nil
	}
}

// kernelStampsSupported says whether this system stamps received TCP
// segments: a socket that accepts SO_TIMESTAMPING says so ("" when it
// does, else why not).
func kernelStampsSupported() string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	}
	if err != nil {
		return "no TCP socket to try SO_TIMESTAMPING on: " + err.Error()
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, kernelStampFlags); err != nil {
		return "the kernel refused SO_TIMESTAMPING: " + err.Error()
	}
	stampsOnce.Do(keepStampingOn)
	return ""
}

var stampsOnce sync.Once

// keepStampingOn holds one stamping socket open for the life of the
// process and waits until the kernel stamps a datagram sent to it. Why:
// the kernel stamps received packets only while some socket wants stamps,
// and it turns that switch on through deferred work (net_enable_timestamp
// schedules it), so a run whose connections were the first stamping
// sockets got stampless reads on its first requests, which then fell back
// to user time (seen in TestKernelTimestampsTLS). With this socket open the
// switch stays on between connections too. Best effort: if no stamp shows
// within ~200 ms, requests still fall back one by one, as they would.
func keepStampingOn() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, kernelStampFlags) != nil ||
		unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}) != nil {
		unix.Close(fd)
		return
	}
	self, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return
	}
	// fd stays open on purpose: it is what keeps the switch on.
	buf, oob := make([]byte, 1), make([]byte, oobSize)
	for i := 0; i < 100; i++ {
		if unix.Sendto(fd, buf, 0, self) != nil {
			return
		}
		time.Sleep(2 * time.Millisecond)
		_, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, 0)
		if err == nil {
			if _, why := parseRxStamp(oob[:oobn]); why == "" {
				return
			}
		}
	}
}

// withKernelStamps turns stamping on for c, or says why it cannot.
func withKernelStamps(c net.Conn) (*kstamp, string) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, "the connection is not a socket"
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, "no raw socket: " + err.Error()
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPING, kernelStampFlags)
		// TCP_INQ (Linux 4.18) lets a read tell a drained socket from
		// one whose FIN is waiting; without it every read tries first.
		unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_INQ, 1)
	}); err != nil {
		return nil, "no raw socket: " + err.Error()
	}
	if serr != nil {
		return nil, "the socket refused SO_TIMESTAMPING: " + serr.Error()
	}
	k := &kstamp{io: kread{rc: rc, conn: c, oob: make([]byte, oobSize)}}
	k.io.loop, k.io.run = k.io.readLoop, k.io.runLoop
	return k, ""
}

// read is net.Conn's Read through recvmsg, keeping the stamp.
func (k *kstamp) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	err, open := k.io.readOnce(p)
	if !open {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: k.io.conn.LocalAddr(), Addr: k.io.conn.RemoteAddr(), Err: net.ErrClosed}
	}
	n, rerr := k.io.n, k.io.rerr
	if err == nil && rerr != nil {
		err = &net.OpError{Op: "read", Net: "tcp", Source: k.io.conn.LocalAddr(), Addr: k.io.conn.RemoteAddr(), Err: os.NewSyscallError("recvmsg", rerr)}
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	ns, why := k.io.ns, k.io.why
	if why != "" {
		k.fail(why)
		return n, nil
	}
	if ns > k.last.Load() {
		k.last.Store(ns) // one reader at a time: no lost update
	}
	return n, nil
}

// parseRxStamp finds the software receive stamp (ns since the epoch) in a
// recvmsg control buffer, or says why there is none (parseCmsgs).
func parseRxStamp(oob []byte) (int64, string) {
	ns, _, why := parseCmsgs(oob)
	return ns, why
}

// parseCmsgs finds in a recvmsg control buffer the software receive stamp
// (ns since the epoch), or says why there is none, and the bytes TCP_INQ
// says are left queued (-1: not reported). It parses in place
// (unix.ParseSocketControlMessage allocates a slice per read, and this runs
// once per read of every stream); the fuzz tests hold it to the same
// answers as ParseSocketControlMessage.
func parseCmsgs(oob []byte) (ns int64, inq int, why string) {
	hdr := unix.SizeofCmsghdr
	found := false
	inq = -1
	for len(oob) >= hdr {
		hlen, level, typ := cmsgHeader(oob)
		if hlen > uint64(len(oob)) || hlen < uint64(hdr) {
			return 0, -1, "a malformed control message (length " + strconv.FormatUint(hlen, 10) + " of " + strconv.Itoa(len(oob)) + " bytes)"
		}
		l := int(hlen)
		data := oob[min(cmsgAlign(hdr), l):l]
		switch {
		case level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPING:
			const ts = int(unsafe.Sizeof(unix.Timespec{}))
			if len(data) < ts {
				return 0, -1, "a truncated SCM_TIMESTAMPING message (" + strconv.Itoa(len(data)) + " bytes)"
			}
			sec, nsec := timespecAt(data)
			if sec == 0 && nsec == 0 {
				return 0, -1, "an SCM_TIMESTAMPING message without a software stamp"
			}
			if sec < 0 || nsec < 0 || nsec >= 1e9 || sec > 1<<33 {
				return 0, -1, "an SCM_TIMESTAMPING message with an impossible time"
			}
			ns, found = sec*1e9+nsec, true
		case level == unix.IPPROTO_TCP && typ == unix.TCP_CM_INQ && len(data) >= 4:
			inq = max(int(int32(binary.NativeEndian.Uint32(data))), 0)
		}
		if a := cmsgAlign(l); a < len(oob) {
			oob = oob[a:]
		} else {
			oob = nil
		}
	}
	if !found {
		return 0, inq, "a read came without a timestamp control message"
	}
	return ns, inq, ""
}

// cmsgHeader reads a native struct cmsghdr at the start of b (by bytes:
// a control buffer need not be aligned).
func cmsgHeader(b []byte) (length uint64, level, typ int32) {
	if unix.SizeofCmsghdr == 16 {
		return binary.NativeEndian.Uint64(b), int32(binary.NativeEndian.Uint32(b[8:])), int32(binary.NativeEndian.Uint32(b[12:]))
	}
	return uint64(binary.NativeEndian.Uint32(b)), int32(binary.NativeEndian.Uint32(b[4:])), int32(binary.NativeEndian.Uint32(b[8:]))
}

// timespecAt reads a native struct timespec at the start of b.
func timespecAt(b []byte) (sec, nsec int64) {
	if unsafe.Sizeof(unix.Timespec{}) == 16 {
		return int64(binary.NativeEndian.Uint64(b)), int64(binary.NativeEndian.Uint64(b[8:]))
	}
	return int64(int32(binary.NativeEndian.Uint32(b))), int64(int32(binary.NativeEndian.Uint32(b[4:])))
}

func cmsgAlign(n int) int {
	const a = int(unsafe.Sizeof(uintptr(0)))
	return (n + a - 1) &^ (a - 1)
}
