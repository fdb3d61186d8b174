package agent

import (
	"bytes"

	"github.com/jujuclone/juju/core/charm"
)

// unpackCharm writes a charm archive into dir with core/charm's checks: no entry outside dir
// (names, absolute paths, symbolic links), size and entry limits counted on the real bytes,
// exec bits kept, charmcraft's hooks/<name> -> ../dispatch links recreated as links.
func unpackCharm(archive []byte, dir string) error {
	return charm.Unpack(bytes.NewReader(archive), int64(len(archive)), dir, charm.DefaultLimits)
}
