package controller

import (
	"context"
	"testing"
)

// A controller that does not run as root gives its machines no uid of their own: bootstrap says
// so in one line, and bootstraps all the same. As root it says nothing (TestBootstrapRun).
func TestBootstrapRunSaysWhenNotRoot(t *testing.T) {
	opts, stderr := newBootstrapOpts(t, &fakeJujud{})
	opts.Euid = func() int { return 1000 }
	if err := bootstrapRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	want := `Creating Juju controller "local" on localhost
WARNING not running as root (uid 1000): the controller's machines get no uid of their own, so hooks run as uid 1000 and can read the controller's files
Bootstrap complete, controller "local" is now available
Initial model "default" added
`
	if stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}
