package host

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Orphans finds the processes a dead agent host left behind: hooks, actions and whatever they
// started, which carry a JUJU_CHARM_DIR of this controller's instances (an operator's shell
// that merely sits in such a directory is not one of them). A hook dies
// with its host (parent-death signal), but what the hook started in its process group does
// not: a new host kills them before it starts any agent, so that no hook of the old one runs
// beside its rerun.
func Orphans(dataDir string) []int {
	instances, err := filepath.Abs(filepath.Join(dataDir, "instances"))
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if belongsTo(pid, instances) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func belongsTo(pid int, instances string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if dir, ok := strings.CutPrefix(string(kv), "JUJU_CHARM_DIR="); ok {
			return within(dir, instances)
		}
	}
	return false
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// killOrphans kills what Orphans finds, with their process groups.
func killOrphans(dataDir string) int {
	pids := Orphans(dataDir)
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != syscall.Getpgrp() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}
