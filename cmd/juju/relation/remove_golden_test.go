package relation

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// TestRemoveRelationGolden keeps what remove-relation prints, stdout and stderr apart (an error
// as root prints it).
func TestRemoveRelationGolden(t *testing.T) {
	tests := []struct {
		name, args string
		err        error
	}{
		{name: "by-endpoints", args: "wordpress mysql:db"},
		{name: "by-id-forced", args: "4 --force --no-wait"},
		{name: "not-found", args: "wordpress mysql", err: apierr.Errorf(apierr.NotFound, `relation matching "wordpress mysql" not found`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeRemoveRelation{err: tt.err}
			ios, out, errOut := output.TestStreams()
			cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error {
				o.IO = ios
				o.ResolveModel = testModel
				o.Client = func(context.Context) (removeAPI, error) { return fake, nil }
				return removeRun(context.Background(), o)
			})
			if err := cmdtest.Execute(cmd, tt.args); err != nil {
				errOut.WriteString("ERROR " + err.Error() + "\n")
			}
			golden.Assert(t, out.String(), "remove-relation/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "remove-relation/"+tt.name+".stderr.golden")
		})
	}
}
