// Package version holds the two versions this project has: its own release (Current) and the
// Juju release whose CLI, API shapes and hook contract it implements (Juju).
package version

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Current is this project's release version; the build may override it with -ldflags -X.
var Current = "0.1.0"

// Juju is the version of Juju whose CLI and hook contract the CLI, the controller and the
// agents speak: `juju version` prints it, hooks get it as JUJU_VERSION, models report it as
// their agent-version. Tools choose their syntax by its major version (ops, jubilant), so it
// must name the Juju release whose behaviour is implemented, not this project's release.
const Juju = "3.6.12"

// Binary is Juju's binary version string, <version>-<os type>-<arch>, e.g.
// "3.6.12-ubuntu-amd64". It reads /etc/os-release once.
var Binary = sync.OnceValue(func() string { return Juju + "-" + HostOSType() + "-" + HostArch() })

// HostOSType names the host's OS as Juju does: "ubuntu" or "centos" by /etc/os-release's ID,
// "genericlinux" for any other Linux, "osx" on macOS, "unknown" when it cannot tell.
func HostOSType() string {
	switch runtime.GOOS {
	case "darwin":
		return "osx"
	case "windows":
		return "windows"
	case "linux":
	default:
		return "unknown"
	}
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "unknown"
	}
	return osTypeFromRelease(string(data))
}

// osTypeFromRelease reads the ID of an os-release file: Juju tells Ubuntu and CentOS apart
// from every other Linux.
func osTypeFromRelease(release string) string {
	for _, line := range strings.Split(release, "\n") {
		id, ok := strings.CutPrefix(strings.TrimSpace(line), "ID=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.Trim(id, "\t '\"")) {
		case "ubuntu":
			return "ubuntu"
		case "centos":
			return "centos"
		}
		return "genericlinux"
	}
	return "unknown"
}

// HostArch is the host's architecture in Juju's names (ppc64el, not ppc64le).
func HostArch() string {
	switch runtime.GOARCH {
	case "ppc64le":
		return "ppc64el"
	case "arm":
		return "armhf"
	}
	return runtime.GOARCH
}

// Build describes the binary as the Go toolchain recorded it.
type Build struct {
	// GitCommit is the commit the binary was built from; "" when not built from a checkout.
	GitCommit string
	// GitTreeState is "clean" or "dirty" (uncommitted changes); "" with no commit.
	GitTreeState string
	// GoVersion is the toolchain's version, e.g. "go1.26.0".
	GoVersion string
}

// Commit and TreeState are set by the build (-ldflags -X, see the Makefile) from git, for
// builds that cannot let go build stamp it (a git that refuses the checkout fails the build).
var Commit, TreeState string

// ReadBuild reads the VCS stamp `go build` embeds in a binary built inside a git checkout, or
// else what the build set in Commit and TreeState.
func ReadBuild() Build {
	b := Build{GoVersion: runtime.Version(), GitCommit: Commit, GitTreeState: TreeState}
	if b.GitCommit != "" && b.GitTreeState == "" {
		b.GitTreeState = "clean"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	revision, modified := "", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		b.GitCommit, b.GitTreeState = revision, "clean"
		if modified == "true" {
			b.GitTreeState = "dirty"
		}
	}
	return b
}
