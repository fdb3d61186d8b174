// Package sshkey parses authorized SSH keys as Juju 3.6 does: one authorized_keys line each,
// named by the MD5 fingerprint of the key ("45:7f:...:b4") and its comment.
package sshkey

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Comments of the keys Juju keeps for itself: they are not listed by ssh-keys, and may be
// neither added nor removed by comment.
const (
	ClientKeyComment = "juju-client-key"
	SystemKeyComment = "juju-system-key"
)

// IsInternal reports whether comment marks one of Juju's own keys.
func IsInternal(comment string) bool {
	return comment == ClientKeyComment || comment == SystemKeyComment
}

// Key is one parsed authorized key.
type Key struct {
	// Line is the key as given, without surrounding blanks.
	Line        string
	Type        string
	Fingerprint string
	Comment     string
	Public      ssh.PublicKey
}

// ErrInvalid is wrapped by every error of Parse.
var ErrInvalid = errors.New("invalid ssh key")

// Parse parses one authorized_keys line ("[options] type base64 [comment]"). Anything else (a
// private key, two lines, a bare word) is refused with Juju's message, "invalid ssh key: <line>".
func Parse(line string) (Key, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.ContainsAny(line, "\n\r") {
		return Key{}, fmt.Errorf("%w: %s", ErrInvalid, line)
	}
	pub, comment, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil || len(rest) > 0 {
		return Key{}, fmt.Errorf("%w: %s", ErrInvalid, line)
	}
	return Key{Line: line, Type: pub.Type(), Fingerprint: Fingerprint(pub), Comment: comment, Public: pub}, nil
}

// Fingerprint is the MD5 of the key's wire form as colon-separated hex, as Juju 3.6 names
// keys (what "ssh-keygen -E md5 -l" prints after "MD5:").
func Fingerprint(pub ssh.PublicKey) string {
	sum := md5.Sum(pub.Marshal())
	h := hex.EncodeToString(sum[:])
	parts := make([]string, 0, len(sum))
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

// Short is how juju ssh-keys lists a key: its fingerprint, then its comment in parentheses
// when it has one.
func (k Key) Short() string {
	if k.Comment == "" {
		return k.Fingerprint
	}
	return k.Fingerprint + " (" + k.Comment + ")"
}

// AuthorizedLine is the public key in authorized_keys form with comment, without options.
func AuthorizedLine(pub ssh.PublicKey, comment string) string {
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if comment != "" {
		line += " " + comment
	}
	return line
}
