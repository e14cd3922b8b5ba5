package replay

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message as the kernel lays it out: a native
// cmsghdr, the data, padding to the next alignment.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	l := uint64(unix.CmsgLen(len(data)))
	if unix.SizeofCmsghdr == 16 {
		binary.NativeEndian.PutUint64(b, l)
		binary.NativeEndian.PutUint32(b[8:], uint32(level))
		binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(l))
		binary.NativeEndian.PutUint32(b[4:], uint32(level))
		binary.NativeEndian.PutUint32(b[8:], uint32(typ))
	}
	copy(b[unix.CmsgLen(0):], data)
	return b
}

// stamping is an scm_timestamping: software stamp sec.nsec, the others 0.
func stamping(sec, nsec int64) []byte {
	b := make([]byte, unsafe.Sizeof(unix.ScmTimestamping{}))
	if unsafe.Sizeof(unix.Timespec{}) == 16 {
		binary.NativeEndian.PutUint64(b, uint64(sec))
		binary.NativeEndian.PutUint64(b[8:], uint64(nsec))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(sec))
		binary.NativeEndian.PutUint32(b[4:], uint32(nsec))
	}
	return b
}

func TestParseRxStamp(t *testing.T) {
	good := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(1_764_000_000, 123_456_789))
	const want = 1_764_000_000*1_000_000_000 + 123_456_789
	short := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(1_764_000_000, 1)[:4])
	other := cmsg(unix.SOL_IP, 8 /* IP_PKTINFO */, make([]byte, 12))
	for _, tc := range []struct {
		name string
		oob  []byte
		ns   int64
		why  string
	}{
		{"software stamp", good, want, ""},
		{"after another message", append(append([]byte{}, other...), good...), want, ""},
		{"absent", nil, 0, "without a timestamp control message"},
		{"only another message", other, 0, "without a timestamp control message"},
		{"cut inside the header", good[:unix.SizeofCmsghdr-1], 0, "without a timestamp control message"},
		{"cut inside the data", good[:unix.CmsgLen(0)+8], 0, "malformed control message"},
		{"data shorter than a timespec", short, 0, "truncated SCM_TIMESTAMPING"},
		{"no software stamp", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(0, 0)), 0, "without a software stamp"},
		{"nanoseconds past a second", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(5, 1_000_000_000)), 0, "impossible time"},
		{"negative", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(-1, 0)), 0, "impossible time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, why := parseRxStamp(tc.oob)
			if ns != tc.ns || (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("parseRxStamp = %d, %q; want %d, %q", ns, why, tc.ns, tc.why)
			}
		})
	}
}

// FuzzParseRxStamp holds the in-place parser to x/sys/unix's
// ParseSocketControlMessage: whatever it finds, the other must agree.
func FuzzParseRxStamp(f *testing.F) {
	good := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(1_764_000_000, 5))
	f.Add(good)
	f.Add(good[:20])
	f.Add(append(cmsg(unix.SOL_IP, 8, make([]byte, 12)), good...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ns, why := parseRxStamp(b)
		if (why == "") != (ns > 0) {
			t.Fatalf("stamp %d with reason %q", ns, why)
		}
		// ParseSocketControlMessage slices past the end of a buffer
		// whose last message's padding is missing: compare on a buffer
		// padded to the alignment, as the kernel writes them.
		p := make([]byte, cmsgAlign(len(b)))
		copy(p, b)
		ns, why = parseRxStamp(p)
		msgs, err := unix.ParseSocketControlMessage(p)
		if err != nil {
			if why == "" {
				t.Fatalf("stamp %d from a buffer x/sys/unix refuses (%v)", ns, err)
			}
			return
		}
		if why != "" {
			return // a message x/sys/unix takes but whose stamp is unusable
		}
		var last *unix.SocketControlMessage
		for i := range msgs {
			if msgs[i].Header.Level == unix.SOL_SOCKET && msgs[i].Header.Type == unix.SCM_TIMESTAMPING {
				last = &msgs[i]
			}
		}
		if last == nil {
			t.Fatalf("stamp %d where x/sys/unix finds no SCM_TIMESTAMPING", ns)
		}
		sec, nsec := timespecAt(last.Data)
		if sec*1e9+nsec != ns {
			t.Fatalf("stamp %d, x/sys/unix's message says %d.%09d", ns, sec, nsec)
		}
	})
}

// TestKernelStampsOnLoopback reads a TCP connection through recvmsg: the
// bytes arrive intact, and each read's stamp lies before the moment the
// read returned, on the same wall clock.
func TestKernelStampsOnLoopback(t *testing.T) {
	msg := bytes.Repeat([]byte("data: {\"x\":1}\n\n"), 1000)
	c, k := stampedLoopback(t, func(c net.Conn) {
		for i := 0; i < len(msg); i += 4000 {
			c.Write(msg[i:min(i+4000, len(msg))])
			time.Sleep(time.Millisecond)
		}
	})
	wc := &watchedConn{Conn: c, k: k}
	var got []byte
	buf := make([]byte, 1500)
	reads := 0
	for {
		n, err := wc.Read(buf)
		after := time.Now().UnixNano()
		got = append(got, buf[:n]...)
		if n > 0 {
			reads++
			if s := k.last.Load(); s == 0 || s > after {
				t.Fatalf("read %d: stamp %d, read returned at %d", reads, s, after)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("read %d bytes, want %d intact", len(got), len(msg))
	}
	if n := k.fails.Load(); n != 0 {
		t.Errorf("%d of %d reads without a stamp (%s)", n, reads, *k.why.Load())
	}
}

// TestKernelReadAllocs holds a kernel-stamped read to no allocation: it
// runs once per read of every stream, and a closure per read (escaping
// with the variables it wrote) and unix.Recvmsg's header once cost five.
func TestKernelReadAllocs(t *testing.T) {
	const size, piece = 256 << 10, 64
	_, k := stampedLoopback(t, func(c net.Conn) {
		c.Write(bytes.Repeat([]byte{'x'}, size))
		c.Read(make([]byte, 1)) // hold the connection open until the client is done
	})
	buf := make([]byte, piece)
	total := 0
	read := func() {
		n, err := k.read(buf)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	read() // waits for the first bytes
	if a := testing.AllocsPerRun(1000, read); a != 0 {
		t.Errorf("%.1f allocations per read, want 0", a)
	}
	if total > size || total < 1000 {
		t.Errorf("read %d bytes of %d", total, size)
	}
	if n := k.fails.Load(); n != 0 {
		t.Errorf("%d reads without a stamp (%s)", n, *k.why.Load())
	}
}

// stampedLoopback connects to a loopback server running serve, turns
// kernel stamps on for the client's end and then sends the server one
// byte, which serve runs after, as a server answers only when asked:
// segments that arrive before stamping is on carry no stamp. The server
// closes its end when serve returns. It skips where the kernel cannot
// stamp.
func stampedLoopback(t *testing.T, serve func(c net.Conn)) (net.Conn, *kstamp) {
	t.Helper()
	if why := kernelStampsSupported(); why != "" {
		t.Skip(why)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := c.Read(make([]byte, 1)); err != nil {
			return
		}
		serve(c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var k *kstamp
	// As watchedConn.Close does: the reading coroutine holds the
	// descriptor between reads, and the socket's Close waits for it.
	t.Cleanup(func() {
		if k != nil {
			k.io.close()
		}
		c.Close()
	})
	k, why := withKernelStamps(c)
	if k == nil {
		t.Fatal(why)
	}
	if _, err := c.Write([]byte{'?'}); err != nil {
		t.Fatal(err)
	}
	return c, k
}
