package bootstrap

import (
	"net"
	"strconv"
)

// APIListenAddr is the address a controller's API binds, given the requested one (jujud
// --api-addr) and the one it had before (Info.APIAddr from bootstrap.json; empty on first
// start). A controller keeps its address across restarts, because its clients
// (controllers.yaml) and agents (agent.conf) know no other: a request for any port (":0", what
// `juju bootstrap` asks for) reuses the recorded port on the requested host. An explicit port is
// bound as asked, even if that moves the controller. kept reports that the recorded port was
// reused, so a failure to bind it can say why that port.
func APIListenAddr(requested, recorded string) (addr string, kept bool) {
	host, port, err := net.SplitHostPort(requested)
	if err != nil || port != "0" || recorded == "" {
		return requested, false
	}
	_, oldPort, err := net.SplitHostPort(recorded)
	if n, perr := strconv.ParseUint(oldPort, 10, 16); err != nil || perr != nil || n == 0 {
		return requested, false
	}
	return net.JoinHostPort(host, oldPort), true
}
