// Package deadaddr makes the two kinds of dead address failover tests dial: one that refuses
// connections, and one that accepts them and never speaks (a hung or firewalled host).
package deadaddr

import (
	"net"
	"testing"
)

// Refused is a loopback address nothing listens on.
func Refused(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// Silent is a loopback address that accepts connections and never speaks, until the test ends.
func Silent(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return lis.Addr().String()
}
