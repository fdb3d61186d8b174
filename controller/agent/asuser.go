package agent

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// asUser runs fn on a thread whose file-system identity is uid:gid with no supplementary
// groups (setfsuid, setfsgid and setgroups act on the calling thread alone), so that whatever
// fn does to files it does with that uid's rights, never root's: for work inside a directory
// the uid controls, where root would follow the links it planted. fn must not start
// goroutines to do that work. The thread gets root's identity back after fn; if it cannot, it
// is never handed back to the runtime, and ends with this goroutine.
func asUser(uid, gid int, fn func() error) error {
	runtime.LockOSThread()
	groups, err := syscall.Getgroups()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("reading the agent's groups: %w", err)
	}
	// Groups and fsgid before the fsuid, while the thread still has every right.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); errno != 0 {
		runtime.UnlockOSThread()
		return fmt.Errorf("dropping the agent's groups: %w", errno)
	}
	syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(gid), 0, 0)
	syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(uid), 0, 0)
	// setfsuid reports no error, only the previous value: ask again (-1 changes nothing).
	if fsuid(-1) != uid || fsgid(-1) != gid {
		if restore(groups) {
			runtime.UnlockOSThread()
		}
		return fmt.Errorf("could not act as uid %d", uid)
	}
	err = fn()
	if restore(groups) {
		runtime.UnlockOSThread()
	}
	return err
}

// restore gives the thread back root's file-system identity and groups; false if it failed.
func restore(groups []int) bool {
	syscall.RawSyscall(syscall.SYS_SETFSUID, 0, 0, 0)
	syscall.RawSyscall(syscall.SYS_SETFSGID, 0, 0, 0)
	gids := make([]uint32, len(groups))
	for i, g := range groups {
		gids[i] = uint32(g)
	}
	var p unsafe.Pointer
	if len(gids) > 0 {
		p = unsafe.Pointer(&gids[0])
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(gids)), uintptr(p), 0); errno != 0 {
		return false
	}
	return fsuid(-1) == 0 && fsgid(-1) == 0
}

func fsuid(uid int) int {
	r, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(uint32(uid)), 0, 0)
	return int(r)
}

func fsgid(gid int) int {
	r, _, _ := syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(uint32(gid)), 0, 0)
	return int(r)
}
