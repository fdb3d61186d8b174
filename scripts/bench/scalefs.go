package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ext4 without a journal will not reuse an inode freed in the last minute (five while the
// inode's block is dirty): each new file or directory reads past every inode deleted that
// recently (the kernel's find_inode_bit and recently_deleted). A unit costs the agent host
// about a dozen new inodes and jujud three, so on such a file system a deploy that begins minutes
// after a large deletion (an earlier run's kill-controller, make test) pays for it: perf put
// the agent host's share in those two functions at 10 % and 16 % in two deploys that began one
// to three minutes after one. With a journal, ext4 makes no such check.

// journalNote says so when dir's file system is ext4 without a journal ("" otherwise, or when
// it cannot tell).
func journalNote(dir string) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	source, fsType := mountOf(f, dir)
	if fsType != "ext4" || !strings.HasPrefix(source, "/dev/") {
		return ""
	}
	if _, err := os.Stat(filepath.Join("/proc/fs/jbd2", filepath.Base(source)+"-8")); err == nil {
		return "" // jbd2 journals the device
	}
	return "Scale: the controller's data directory is on ext4 without a journal (" + source + "), which will not reuse an inode freed in the last " +
		"minutes and reads past each such inode whenever it makes a file: a run that begins minutes after a large deletion (an earlier run's " +
		"kill-controller, make test) pays for it in its deploy."
}

// mountOf finds, in a mountinfo listing, the mount that holds path (the longest mount point
// that is path or one of its parents) and returns its source and file system type.
func mountOf(mountinfo io.Reader, path string) (source, fsType string) {
	path = filepath.Clean(path)
	best := -1
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
		before, after, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(tail) < 2 {
			continue
		}
		point := unescapeMount(fields[4])
		if point != "/" && path != point && !strings.HasPrefix(path, point+"/") {
			continue
		}
		if len(point) >= best { // later mounts over the same point win
			best, fsType, source = len(point), tail[0], unescapeMount(tail[1])
		}
	}
	return source, fsType
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
