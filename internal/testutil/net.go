package testutil

import (
	"net"
	"sync"
	"testing"
)

// ServeConns listens on 127.0.0.1 and runs handle for each connection it
// accepts, on its own goroutine: for servers that must speak HTTP wrongly
// on purpose, which net/http will not. It returns the address; at the
// test's end it stops listening and waits for every handle to return.
func ServeConns(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}
