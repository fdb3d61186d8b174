package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/core/modelconfig"
)

// juju-*-proxy reach hooks (and actions, which share the context's environment) as Juju's
// JUJU_CHARM_*_PROXY.
func TestHookEnvHasModelProxies(t *testing.T) {
	a := &unitAgent{conf: Conf{ID: "wordpress/0", Model: "uuid"}, dir: t.TempDir()}
	snap := unitSnapshot("alive")
	snap.app.ModelConfig = modelconfig.Effective(map[string]string{"juju-http-proxy": "http://squid:3128"})
	env := map[string]string{}
	for _, kv := range a.hookEnv(&hookSpec{Kind: hookInstall}, "ctx", snap) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["JUJU_CHARM_HTTP_PROXY"] != "http://squid:3128" || env["JUJU_CHARM_NO_PROXY"] != "127.0.0.1,localhost,::1" {
		t.Errorf("env = %v", env)
	}
	if _, ok := env["http_proxy"]; ok {
		t.Errorf("legacy proxy without http-proxy: %v", env)
	}
}

// logging-config decides what the unit logs: below a logger's level nothing is written.
func TestUnitLogFollowsLoggingConfig(t *testing.T) {
	dir := t.TempDir()
	l, err := openUnitLog(dir, "unit-app-0", "uuid", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	l.write("DEBUG", "unit.app/0.install", "before any config") // everything until it is read
	l.setLoggingConfig("<root>=INFO")
	l.write("DEBUG", "unit.app/0.install", "dropped debug")
	l.write("INFO", "juju.worker.uniter", "kept info")
	l.setLoggingConfig("<root>=WARNING;unit=DEBUG")
	l.write("DEBUG", "unit.app/0.juju-log", "kept unit debug")
	l.write("INFO", "juju.worker.uniter", "dropped agent info")
	l.setLoggingConfig("not;valid") // refused when set; the levels stay
	l.write("INFO", "juju.worker.uniter", "still dropped")
	data, err := os.ReadFile(filepath.Join(dir, unitLogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"before any config", "kept info", "kept unit debug"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log lacks %q:\n%s", want, data)
		}
	}
	for _, not := range []string{"dropped", "still dropped"} {
		if strings.Contains(string(data), not) {
			t.Errorf("log has %q:\n%s", not, data)
		}
	}
	if len(l.pending) != 3 {
		t.Errorf("%d records to ship, want 3", len(l.pending))
	}
}

// automatically-retry-hooks: 5s, then twice as long each time up to 5m; a success or the
// user's resolved starts again from 5s; nothing is due while retries are off.
func TestHookRetryBackoff(t *testing.T) {
	var r hookRetry
	r.arm()
	if r.armed {
		t.Fatal("armed while off")
	}
	r.enabled = true
	var delays []time.Duration
	for range 8 {
		r.arm()
		r.arm() // armed already: no change
		delays = append(delays, r.delay)
		r.fired()
		if !r.take() || r.take() {
			t.Fatal("a firing is one retry")
		}
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
	r.reset()
	r.arm()
	if r.delay != 5*time.Second {
		t.Errorf("after reset: %v", r.delay)
	}
	r.fired()
	r.enabled = false
	if r.take() {
		t.Error("a retry ran after the model turned retries off")
	}
	r.reset()
}
