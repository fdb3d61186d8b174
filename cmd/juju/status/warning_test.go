package status

import (
	"testing"

	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// A controller that does not run as root says so with the model: one line, as the model's
// Notes in the table and as model.warning in YAML and JSON.
func TestStatusRunShowsControllerWarning(t *testing.T) {
	for _, f := range []output.Format{output.Tabular, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			fs := oneApp()
			fs.Model.Warning = "the controller runs as uid 1000, not root: hooks run as the controller's user and can read its files"
			out, errOut, err := runStatus(t, &fakeStatus{resp: fs}, &statusOptions{Format: f})
			if err != nil {
				t.Fatal(err)
			}
			if errOut != "" {
				t.Errorf("stderr = %q", errOut)
			}
			golden.Assert(t, out, "status-command/not-root."+string(f)+".golden")
		})
	}
}
