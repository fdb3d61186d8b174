package machine

import (
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
)

// Shared helpers, under the short names these tests use.
var (
	execute  = cmdtest.Execute
	checkErr = cmdtest.CheckErr
)
