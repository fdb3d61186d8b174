package hooktool

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer refuses processes of other users: an abstract socket has no file permissions, so
// anyone on the host could connect (they would still need a context id). With only >= 0 the
// caller must be of that uid (Server.OnlyFrom), else of this process's uid or root.
func checkPeer(conn net.Conn, only int64) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return credErr
	}
	if only >= 0 {
		if int64(cred.Uid) != only {
			return fmt.Errorf("caller uid %d is not the machine's uid %d", cred.Uid, only)
		}
		return nil
	}
	if uid := uint32(os.Geteuid()); cred.Uid != uid && cred.Uid != 0 {
		return fmt.Errorf("caller uid %d is not the unit agent's uid %d", cred.Uid, uid)
	}
	return nil
}
