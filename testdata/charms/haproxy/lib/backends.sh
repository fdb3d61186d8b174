# Sourced by the haproxy hooks that deal with backends (not a hook itself).
# $backends/<app>/<n> holds "host:port" for each unit of a related website that published it.
backends=$state/backends

# report sets the status and the port from the backends known.
report() {
	set -- "$backends"/*/*
	if [ -e "$1" ]; then
		[ $# = 1 ] && s= || s=s
		status-set active "balancing $# backend$s"
		open-port 80/tcp
	else
		status-set blocked "waiting for backends"
		close-port 80/tcp
	fi
}
