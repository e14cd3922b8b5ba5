package replay

import (
	"encoding/binary"
	"io"
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

// oobSize holds one SCM_TIMESTAMPING message (three timespecs); a larger
// message arrives with MSG_CTRUNC and the read counts as stampless.
var oobSize = unix.CmsgSpace(int(unsafe.Sizeof(unix.ScmTimestamping{})))

// kread reads a connection through recvmsg.
type kread struct {
	rc   syscall.RawConn
	conn net.Conn
	oob  []byte
	// recv is the function RawConn.Read calls, bound once per connection,
	// with its buffer and results in the fields below, and msg and iov
	// the recvmsg arguments kept with them: a closure made per read
	// escapes to the heap with every variable it writes, and
	// unix.Recvmsg allocates its message header, so reading through them
	// cost five allocations per read (a third of the client's in
	// selftest's section 1).
	recv           func(fd uintptr) bool
	p              []byte
	n, oobn, flags int
	rerr           error
	msg            unix.Msghdr
	iov            unix.Iovec
}

// recvmsg is kread.recv: one recvmsg into k.p, retried on EINTR; false
// (wait for the socket to become readable) on EAGAIN.
func (k *kread) recvmsg(fd uintptr) bool {
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
	return k.rerr != unix.EAGAIN
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
	}); err != nil {
		return nil, "no raw socket: " + err.Error()
	}
	if serr != nil {
		return nil, "the socket refused SO_TIMESTAMPING: " + serr.Error()
	}
	k := &kstamp{io: kread{rc: rc, conn: c, oob: make([]byte, oobSize)}}
	k.io.recv = k.io.recvmsg
	return k, ""
}

// read is net.Conn's Read through recvmsg, keeping the stamp.
func (k *kstamp) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	k.io.p = p
	err := k.io.rc.Read(k.io.recv)
	k.io.p = nil // the caller's buffer is not kept
	n, oobn, flags, rerr := k.io.n, k.io.oobn, k.io.flags, k.io.rerr
	if err == nil && rerr != nil {
		err = &net.OpError{Op: "read", Net: "tcp", Source: k.io.conn.LocalAddr(), Addr: k.io.conn.RemoteAddr(), Err: os.NewSyscallError("recvmsg", rerr)}
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	if flags&unix.MSG_CTRUNC != 0 {
		k.fail("the kernel's timestamp control message was truncated")
		return n, nil
	}
	ns, why := parseRxStamp(k.io.oob[:oobn])
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
// recvmsg control buffer, or says why there is none. It parses in place
// (unix.ParseSocketControlMessage allocates a slice per read, and this runs
// once per read of every stream); the fuzz test holds it to the same
// answers as ParseSocketControlMessage.
func parseRxStamp(oob []byte) (int64, string) {
	hdr := unix.SizeofCmsghdr
	found := false
	var ns int64
	for len(oob) >= hdr {
		hlen, level, typ := cmsgHeader(oob)
		if hlen > uint64(len(oob)) || hlen < uint64(hdr) {
			return 0, "a malformed control message (length " + strconv.FormatUint(hlen, 10) + " of " + strconv.Itoa(len(oob)) + " bytes)"
		}
		l := int(hlen)
		data := oob[min(cmsgAlign(hdr), l):l]
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPING {
			const ts = int(unsafe.Sizeof(unix.Timespec{}))
			if len(data) < ts {
				return 0, "a truncated SCM_TIMESTAMPING message (" + strconv.Itoa(len(data)) + " bytes)"
			}
			sec, nsec := timespecAt(data)
			if sec == 0 && nsec == 0 {
				return 0, "an SCM_TIMESTAMPING message without a software stamp"
			}
			if sec < 0 || nsec < 0 || nsec >= 1e9 || sec > 1<<33 {
				return 0, "an SCM_TIMESTAMPING message with an impossible time"
			}
			ns, found = sec*1e9+nsec, true
		}
		if a := cmsgAlign(l); a < len(oob) {
			oob = oob[a:]
		} else {
			oob = nil
		}
	}
	if !found {
		return 0, "a read came without a timestamp control message"
	}
	return ns, ""
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
