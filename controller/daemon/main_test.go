package daemon_test

import (
	"os"
	"testing"

	"github.com/jujuclone/juju/controller/agent/hooktool"
)

// TestMain lets this test binary act as the hook tools: the controller under test links them
// to its own executable, as jujud does.
func TestMain(m *testing.M) {
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
