package sshkey

import (
	"errors"
	"testing"
)

// A key made by ssh-keygen; "ssh-keygen -E md5 -lf" says MD5:28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31.
const edKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO/ouXKD6+/xvlq9BNcqk3yJ8TzC8wg8oSK+pUJhJNnU me@host"

func TestParse(t *testing.T) {
	k, err := Parse("  " + edKey + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if k.Fingerprint != "28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31" || k.Comment != "me@host" ||
		k.Type != "ssh-ed25519" || k.Line != edKey {
		t.Errorf("key = %+v", k)
	}
	if k.Short() != "28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31 (me@host)" {
		t.Errorf("short = %q", k.Short())
	}
	// Options before the key are part of an authorized_keys line.
	if k, err := Parse(`no-pty,command="true" ` + edKey); err != nil || k.Comment != "me@host" {
		t.Errorf("with options: %+v, %v", k, err)
	}
	noComment, err := Parse("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO/ouXKD6+/xvlq9BNcqk3yJ8TzC8wg8oSK+pUJhJNnU")
	if err != nil || noComment.Short() != k.Fingerprint {
		t.Errorf("without comment: %q, %v", noComment.Short(), err)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, bad := range []string{
		"", "   ", "not a key", "ssh-rsa", "ssh-ed25519 AAAAnotbase64!! me",
		edKey + "\n" + edKey,
		"-----BEGIN OPENSSH PRIVATE KEY-----",
	} {
		_, err := Parse(bad)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want invalid", bad, err)
		}
	}
	if _, err := Parse("not a key"); err == nil || err.Error() != "invalid ssh key: not a key" {
		t.Errorf("message = %v", err)
	}
}

func TestIsInternal(t *testing.T) {
	if !IsInternal("juju-client-key") || !IsInternal("juju-system-key") || IsInternal("me@host") {
		t.Error("internal comments")
	}
}
