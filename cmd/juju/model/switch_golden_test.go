package model

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// TestSwitchGolden keeps what switch prints: with no argument the current controller:model on
// stdout (scripts read it); with one, nothing on stdout and the change on stderr.
func TestSwitchGolden(t *testing.T) {
	for _, tt := range []struct{ name, target string }{{"show", ""}, {"model", "controller"}} {
		t.Run(tt.name, func(t *testing.T) {
			store := seededStore(t)
			ios, out, errOut := output.TestStreams()
			opts := &switchOptions{IO: ios, Store: store, Config: configOf("local", "default"), LookupModel: lookupModel(store), Target: tt.target}
			if err := switchRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "switch/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "switch/"+tt.name+".stderr.golden")
		})
	}
}
