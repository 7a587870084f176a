//go:build unix

package h1

import (
	"crypto/tls"
	"net"
	"syscall"
)

// peerClosed says whether the server has closed (or written on) an idle
// connection, from one read that does not wait: EOF or bytes where no
// answer is due both mean the connection cannot carry a request.
func peerClosed(nc net.Conn) bool {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, err := syscall.Read(int(fd), b[:])
		// EAGAIN: nothing to read, the connection is open. Return true
		// either way: this read must not wait.
		closed = n > 0 || n == 0 && err == nil || err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
		return true
	})
	return closed || err != nil
}
