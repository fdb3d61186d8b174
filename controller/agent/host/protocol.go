// Package host runs the local provider's agents in a process of their own (`jujud agents`),
// apart from the controller, and lets the controller start and stop them there.
//
// One agent host serves every machine of a controller's local provider: a Go process per
// machine would cost about 10 MB each (10 GB at 1,000 machines), where one host adds a few
// goroutines per agent. The host outlives the controller: killing or restarting jujud stops no
// hook; the agents wait for the API to come back and go on. The controller talks to the host
// over a unix socket only its own user may use, in one-line JSON requests, on a few connections
// it keeps open from one request to the next.
package host

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
)

// Files of the agent host in the controller's data directory.
const (
	// PIDFile holds the host's process id (kill-controller stops it).
	PIDFile = "agents.pid"
	// LockFile is held (flock) by the running host, so that there is never a second.
	LockFile = "agents.lock"
	// LogFile receives the host's own log.
	LogFile = "agents.log"
)

// Request operations.
const (
	opHello    = "hello"     // answered, then held open until the host exits
	opStart    = "start"     // start the machine agent of Dir
	opStopTree = "stop-tree" // stop the agents of Dir and below
	opShutdown = "shutdown"  // stop every agent and exit
	// opSetAddrs gives the agents the controller's API addresses now (Addrs): members came
	// or went (enable-ha), and no agent needs to restart for it.
	opSetAddrs = "set-addrs"
	// opCheckFiles asks whether the host could start more agents: it answers FilesInUse and
	// FilesLimit when it is too near its limit of open files (fdlimit).
	opCheckFiles = "check-files"
)

type request struct {
	Op  string `json:"op"`
	Dir string `json:"dir,omitempty"`
	// Addrs are the API addresses of opSetAddrs.
	Addrs []string `json:"addrs,omitempty"`
}

type response struct {
	Error string `json:"error,omitempty"`
	PID   int    `json:"pid,omitempty"`
	// APIAddrs are the controller addresses the host's agents use (hello).
	APIAddrs []string `json:"api_addrs,omitempty"`
	// FilesInUse and FilesLimit: the host is too near its limit of open files (check-files).
	FilesInUse int    `json:"files_in_use,omitempty"`
	FilesLimit uint64 `json:"files_limit,omitempty"`
}

// socketName is the host's control socket for a data directory: an abstract unix socket (no
// path length limit, nothing left behind by a killed host), which checks its caller's uid
// since it has no file permissions.
func socketName(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return "@jujud-agents-" + hex.EncodeToString(sum[:12])
}

func writeMsg(conn net.Conn, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = conn.Write(append(data, '\n'))
	return err
}

func readMsg(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("decoding agent host message: %w", err)
	}
	return nil
}
