//go:build !linux

package hooktool

import "net"

// checkPeer: elsewhere only path sockets exist, and their file permissions guard them.
func checkPeer(net.Conn, int64) error { return nil }
