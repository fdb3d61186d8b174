package agent

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
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

// sentLogs records the calls a log ships its records in.
type sentLogs struct {
	mu    sync.Mutex
	calls [][]string
	sent  chan struct{}
}

func (s *sentLogs) WriteLogs(_ context.Context, _ string, records []*pb.LogRecord) error {
	var msgs []string
	for _, r := range records {
		msgs = append(msgs, r.Message)
	}
	s.mu.Lock()
	s.calls = append(s.calls, msgs)
	s.mu.Unlock()
	s.sent <- struct{}{}
	return nil
}

// What an agent logs in one pass of its work goes to the controller in one call, as soon as
// the agent goes idle (issue 16: a machine agent's three deploy lines took two or three calls),
// not when the gathering time runs out (an hour here).
func TestLogShipsWhenTheAgentGoesIdle(t *testing.T) {
	sent := &sentLogs{sent: make(chan struct{}, 10)}
	l, err := openAgentLogTo(filepath.Join(t.TempDir(), machineLogFile), "machine-0", "uuid", sent)
	if err != nil {
		t.Fatal(err)
	}
	l.gather = time.Hour
	l.idle() // nothing pending: no word left over for the shipper to come
	stop := l.shipUntilStopped(context.Background())
	defer stop()
	for _, m := range []string{"machine agent machine-0 start", `deploying unit "idle/0"`, `starting unit agent "unit-idle-0"`} {
		l.write("INFO", deployerLogger, m)
		time.Sleep(10 * time.Millisecond) // as a loaded agent spreads them
	}
	l.idle()
	select {
	case <-sent.sent:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing shipped when the agent went idle")
	}
	sent.mu.Lock()
	defer sent.mu.Unlock()
	if len(sent.calls) != 1 || len(sent.calls[0]) != 3 {
		t.Errorf("shipped in %d calls: %q; want the three lines in one", len(sent.calls), sent.calls)
	}
}
