package version

import (
	"regexp"
	"testing"
)

func TestOSTypeFromRelease(t *testing.T) {
	for release, want := range map[string]string{
		"NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n": "ubuntu",
		"ID=\"centos\"\n": "centos",
		"PRETTY_NAME=\"Debian GNU/Linux 13\"\nID=debian\n": "genericlinux",
		"NAME=nothing\n": "unknown",
	} {
		if got := osTypeFromRelease(release); got != want {
			t.Errorf("%q: %q, want %q", release, got, want)
		}
	}
}

// TestBinaryParsesAsJuju: jubilant's Version parses "major.minor.patch-release-arch".
func TestBinaryParsesAsJuju(t *testing.T) {
	if !regexp.MustCompile(`^3\.6\.\d+-[^-]+-[^-]+$`).MatchString(Binary()) {
		t.Errorf("Binary() = %q", Binary())
	}
}
