//go:build !unix

package h1

import "net"

// peerClosed cannot look without waiting here: a connection the server
// closed fails its next request, as a StaleError (sent again once) when
// the write fails, else as a ResetError (not sent again).
func peerClosed(net.Conn) bool { return false }
