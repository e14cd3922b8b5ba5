package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The reading coroutine (kts_linux.go): a read that drained the socket is
// followed by a wait, not a try; the end of the stream and a reset that
// came right behind the last bytes are still seen; Close and the user's
// deadlines work as on any connection. Counters, not clocks.

// TestDrainedReadWaitsWithoutTry: in lockstep (the server writes its next
// message only after the client has read the last), every read is one
// recvmsg: none finds the socket empty (the old reader's EAGAIN try).
func TestDrainedReadWaitsWithoutTry(t *testing.T) {
	const msgs = 50
	msg := []byte("data: {\"x\":1}\n\n")
	c, k := stampedLoopback(t, func(c net.Conn) {
		ack := make([]byte, 1)
		for i := 0; i < msgs; i++ {
			c.Write(msg)
			if _, err := c.Read(ack); err != nil {
				return
			}
		}
	})
	// The first message is queued before the first read: a read that
	// came before it would try, find nothing, and count one try more.
	waitSocket(t, c, func(inq int, _ uint8) bool { return inq > 0 })
	wc := &watchedConn{Conn: c, k: k}
	buf := make([]byte, 4096)
	for i := 0; i < msgs; i++ {
		n, err := wc.Read(buf)
		if err != nil || !bytes.Equal(buf[:n], msg) {
			t.Fatalf("read %d: %q, %v", i, buf[:n], err)
		}
		if _, err := c.Write([]byte{'.'}); err != nil {
			t.Fatal(err)
		}
	}
	if k.io.tries != msgs {
		t.Errorf("%d recvmsg calls for %d reads, want one each", k.io.tries, msgs)
	}
	if k.io.checks != 0 {
		t.Errorf("%d waits ended by the check deadline in lockstep, want 0", k.io.checks)
	}
}

// TestEndBehindLastBytes: the server's last bytes and its FIN (or a
// reset) arrive before the client reads them; the client gets the bytes,
// then the end (or the reset), never a wait for bytes that will not come.
func TestEndBehindLastBytes(t *testing.T) {
	for _, reset := range []bool{false, true} {
		name := "FIN"
		if reset {
			name = "RST"
		}
		t.Run(name, func(t *testing.T) {
			sent := make(chan struct{})
			c, k := stampedLoopback(t, func(c net.Conn) {
				c.Write([]byte("last bytes"))
				if reset {
					c.(*net.TCPConn).SetLinger(0)
				}
				c.Close()
				close(sent)
			})
			<-sent
			// Both are in the client's socket before its first read:
			// a read of the bytes must not hide what follows them. The
			// socket's state says the FIN (CLOSE_WAIT) or the reset
			// (CLOSE) was processed: on a loaded machine the kernel may
			// take it in after the bytes, and then its own readiness,
			// not the check deadline, would end the wait.
			want := uint8(unix.BPF_TCP_CLOSE_WAIT)
			if reset {
				want = unix.BPF_TCP_CLOSE
			}
			waitSocket(t, c, func(inq int, state uint8) bool { return inq > 0 && state == want })
			wc := &watchedConn{Conn: c, k: k}
			buf := make([]byte, 4096)
			n, err := wc.Read(buf)
			if err != nil || string(buf[:n]) != "last bytes" {
				t.Fatalf("first read %q, %v", buf[:n], err)
			}
			_, err = wc.Read(buf)
			switch {
			case !reset && err != io.EOF:
				t.Errorf("after the bytes and a FIN: %v, want EOF", err)
			case reset && !errors.Is(err, syscall.ECONNRESET):
				t.Errorf("after the bytes and a reset: %v, want a reset", err)
			}
			if !reset && k.io.checks != 0 {
				t.Errorf("the FIN was found by the check deadline (%d), want TCP_INQ to say it was there", k.io.checks)
			}
			// The reset raises no readiness of its own once the bytes
			// are read, but the poller may still deliver the edge it
			// raised on arrival (netpoll had not collected it when the
			// read began; kernel 6.18 does this): then the wait ends at
			// once. Either way it ends within one check deadline.
			if reset && k.io.checks > 1 {
				t.Errorf("%d check deadlines before the reset was seen, want at most 1", k.io.checks)
			}
		})
	}
}

// waitSocket waits (up to 10 s) until ok holds for the bytes queued on
// c's socket (SIOCINQ) and its TCP state (TCP_INFO).
func waitSocket(t *testing.T, c net.Conn, ok func(inq int, state uint8) bool) {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for range 10_000 {
		var n int
		var state uint8
		rc.Control(func(fd uintptr) {
			n, _ = ioctlInq(int(fd))
			if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				state = info.State
			}
		})
		if ok(n, state) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the socket never reached the state the test needs")
}

// afterOneRead is a stamped connection whose server sent one byte and
// then waits, that byte read: the coroutine sits between reads.
func afterOneRead(t *testing.T) (*watchedConn, *kstamp, []byte) {
	t.Helper()
	c, k := stampedLoopback(t, func(c net.Conn) {
		c.Write([]byte("x"))
		c.Read(make([]byte, 1))
	})
	wc := &watchedConn{Conn: c, k: k}
	buf := make([]byte, 16)
	if _, err := wc.Read(buf); err != nil {
		t.Fatal(err)
	}
	return wc, k, buf
}

// TestCloseEndsTheCoroutine: Close returns while the coroutine sits
// between reads holding the descriptor, and while a read waits; reads
// then say the connection is closed.
func TestCloseEndsTheCoroutine(t *testing.T) {
	t.Run("between reads", func(t *testing.T) {
		wc, _, buf := afterOneRead(t)
		if err := wc.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := wc.Read(buf); !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after Close: %v, want net.ErrClosed", err)
		}
	})
	t.Run("during a read", func(t *testing.T) {
		wc, k, buf := afterOneRead(t)
		done := make(chan error)
		go func() {
			_, err := wc.Read(buf) // waits: the server sends nothing more
			done <- err
		}()
		for !k.io.isReading() {
			time.Sleep(time.Millisecond)
		}
		if err := wc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err == nil {
			t.Error("a read waiting when the connection closed returned no error")
		}
	})
}

// TestUserDeadlineEndsRead: a read deadline the user sets ends a read with
// os.ErrDeadlineExceeded, as on any connection; the check deadline does
// not take it for its own.
func TestUserDeadlineEndsRead(t *testing.T) {
	wc, k, buf := afterOneRead(t)
	wc.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := wc.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the user's deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	wc.SetReadDeadline(time.Time{})
	if k.io.checks != 0 {
		t.Errorf("%d check deadlines, want the user's deadline left alone", k.io.checks)
	}
}

// isReading says whether a read is in progress.
func (k *kread) isReading() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.reading
}

// ioctlInq is the bytes queued on a socket (SIOCINQ).
func ioctlInq(fd int) (int, error) { return unix.IoctlGetInt(fd, unix.SIOCINQ) }

// FuzzParseCmsgsInq holds the in-place TCP_INQ reading to x/sys/unix's
// ParseSocketControlMessage: a count found is the last TCP_CM_INQ
// message's, and none is found where it finds none.
func FuzzParseCmsgsInq(f *testing.F) {
	four := func(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
	good := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPING, stamping(1_764_000_000, 5))
	f.Add(append(append([]byte{}, good...), cmsg(unix.IPPROTO_TCP, unix.TCP_CM_INQ, four(7))...))
	f.Add(cmsg(unix.IPPROTO_TCP, unix.TCP_CM_INQ, four(1)))
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := make([]byte, cmsgAlign(len(b)))
		copy(p, b)
		_, inq, why := parseCmsgs(p)
		msgs, err := unix.ParseSocketControlMessage(p)
		if err != nil || (why != "" && inq < 0) {
			return
		}
		want := -1
		for _, m := range msgs {
			if m.Header.Level == unix.IPPROTO_TCP && m.Header.Type == unix.TCP_CM_INQ && len(m.Data) >= 4 {
				want = max(int(int32(binary.NativeEndian.Uint32(m.Data))), 0)
			}
		}
		if why == "" && inq != want {
			t.Fatalf("inq %d, x/sys/unix's messages say %d", inq, want)
		}
	})
}
