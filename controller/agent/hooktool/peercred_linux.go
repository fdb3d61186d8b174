package hooktool

import (
	"fmt"
	"net"
	"os"

	"github.com/jujuclone/juju/internal/peercred"
)

// checkPeer refuses processes of other users: an abstract socket has no file permissions, so
// anyone on the host could connect (they would still need a context id). With only >= 0 the
// caller must be of that uid (Server.OnlyFrom), else of this process's uid or root.
func checkPeer(conn net.Conn, only int64) error {
	if _, ok := conn.(*net.UnixConn); !ok {
		return nil
	}
	uid, err := peercred.UID(conn)
	if err != nil {
		return err
	}
	if only >= 0 {
		if int64(uid) != only {
			return fmt.Errorf("caller uid %d is not the machine's uid %d", uid, only)
		}
		return nil
	}
	if own := uint32(os.Geteuid()); uid != own && uid != 0 {
		return fmt.Errorf("caller uid %d is not the unit agent's uid %d", uid, own)
	}
	return nil
}
