package model

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// TestAddModelGolden keeps what add-model prints: nothing on stdout, what it did on stderr.
func TestAddModelGolden(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	opts := &addModelOptions{
		IO: ios, Store: seededStore(t), Config: configOf("local", "default"), Name: "test",
		Client: func(context.Context) (addModelAPI, error) { return &fakeAddModel{}, nil },
	}
	if err := addModelRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, out.String(), "add-model/test.stdout.golden")
	golden.Assert(t, errOut.String(), "add-model/test.stderr.golden")
}
