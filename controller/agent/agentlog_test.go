package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A unit's directory names its unit back, dashes in the application name and all.
func TestUnitFromDir(t *testing.T) {
	for _, unit := range []string{"mysql/0", "my-app/12", "a-b-c/3"} {
		if got := unitFromDir(unitDirName(unit)); got != unit {
			t.Errorf("unitFromDir(%q) = %q, want %q", unitDirName(unit), got, unit)
		}
	}
}

// A machine agent's log is its own file, tagged with the machine; a deployer without a log
// (nil) writes nothing and does not fail.
func TestMachineLogFile(t *testing.T) {
	var none *agentLog
	none.write("INFO", deployerLogger, "nowhere")
	dir := t.TempDir()
	l, err := openAgentLog(filepath.Join(dir, machineLogFile), "machine-0", "uuid", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.write("INFO", deployerLogger, `deploying unit "mysql/0"`)
	l.close()
	data, err := os.ReadFile(filepath.Join(dir, machineLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `INFO juju.worker.deployer deploying unit "mysql/0"`) {
		t.Errorf("machine log: %s", data)
	}
	if len(l.pending) != 1 || l.pending[0].Entity != "machine-0" {
		t.Errorf("pending records: %v", l.pending)
	}
}

// Agents share the parse of their model's logging-config (read only); a spec that does not
// parse is refused, as before.
func TestLoggingConfigParsedOnce(t *testing.T) {
	a, err := parsedLoggingConfig("<root>=WARNING;unit=DEBUG")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parsedLoggingConfig("<root>=WARNING;unit=DEBUG")
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("the same logging-config was parsed twice")
	}
	if c, _ := parsedLoggingConfig("<root>=ERROR"); reflect.DeepEqual(a, c) {
		t.Errorf("two logging-configs parsed alike: %v", c)
	}
	if _, err := parsedLoggingConfig("unit=LOUD"); err == nil {
		t.Error("a logging-config that does not parse was taken")
	}
}
