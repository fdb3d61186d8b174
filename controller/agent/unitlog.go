package agent

import (
	"path/filepath"

	"github.com/jujuclone/juju/client"
)

// unitLogFile is the unit's own log in its directory: hook output, juju-log messages and what
// the agent did.
const unitLogFile = "unit.log"

// unitLog is a unit agent's log (agentlog.go), tagged unit-<app>-<n>.
type unitLog = agentLog

func openUnitLog(dir, tag, model string, c *client.Client) (*unitLog, error) {
	return openAgentLog(filepath.Join(dir, unitLogFile), tag, model, c)
}
