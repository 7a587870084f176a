//go:build !unix

package h1

import "net"

// peerClosed cannot look without waiting here: a connection the server
// closed fails its next request as a StaleError, sent again once.
func peerClosed(net.Conn) bool { return false }
