package cmdutil_test

import (
	"os"
	"testing"

	"github.com/jujuclone/juju/controller/agent/hooktool"
)

// TestMain lets this test binary act as the hook tools of the in-process controller
// (cmdtest.StartController links them to it).
func TestMain(m *testing.M) {
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
