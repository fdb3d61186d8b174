package daemon_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// trustCharm logs each config-changed and what credential-get answered in it: the JSON goes
// to cred-<n>.json (n counts the config-changed hooks) before the log line says "ok".
const trustCharm = `#!/bin/sh
echo "${JUJU_DISPATCH_PATH#hooks/} ${JUJU_REMOTE_UNIT:--}" >>hooks.log
case $JUJU_DISPATCH_PATH in
hooks/config-changed)
	n=$(grep -c '^config-changed ' hooks.log)
	if credential-get --format=json >"cred-$n.json" 2>cred.err; then
		echo "credential-get $n ok" >>hooks.log
	else
		echo "credential-get $n failed: $(cat cred.err)" >>hooks.log
	fi
	;;
esac
`

const trustMeta = "name: vault\nsummary: v\n"

// Trust as in Juju 3.6: credential-get gives the model's cloud spec only to a trusted
// application, and a change of trust (juju trust, juju trust --remove, juju config trust=...)
// runs config-changed on the application's units, where credential-get sees the new trust.
func TestTrustRunsConfigChangedAndCredentialGet(t *testing.T) {
	c, _, dir := startController(t)
	ctx := context.Background()
	deployDir(t, c, dispatchCharm(t, "vault", trustMeta, trustCharm), "vault", 1)
	const denied = "failed: ERROR cannot access cloud credentials: permission denied"
	waitLog(t, dir, "vault/0", "install -", "config-changed -", "credential-get 1 "+denied, "start -")

	setTrust := func(v string) {
		t.Helper()
		if err := c.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "vault", Values: map[string]string{"trust": v}}); err != nil {
			t.Fatal(err)
		}
	}
	setTrust("true") // juju trust vault
	waitLog(t, dir, "vault/0", "start -", "config-changed -", "credential-get 2 ok")
	var spec map[string]any
	if err := json.Unmarshal([]byte(charmFile(t, dir, "vault/0", "cred-2.json")), &spec); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "local", "name": "localhost", "region": "localhost",
		"credential": map[string]any{"auth-type": "empty"}, "is-controller-cloud": true}
	if !equalJSON(spec, want) {
		t.Errorf("credential-get when trusted: %v, want %v", spec, want)
	}

	setTrust("true") // unchanged: nothing is written, no hook runs
	setTrust("false")
	log := waitLogLines(t, dir, "vault/0", "credential-get 3 "+denied)
	if n := count(log, "config-changed -"); n != 3 {
		t.Errorf("config-changed ran %d times, want 3 (deploy, trust, trust removed): %v", n, log)
	}

	// deploy --trust: trusted from the first config-changed.
	up, err := c.UploadCharm(ctx, "default", zipCharm(t, dispatchCharm(t, "vault", trustMeta, trustCharm)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "trusted", CharmUrl: up.Url, NumUnits: 1,
		Base: &pb.Base{Name: "ubuntu", Channel: "24.04"}, Trust: true}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, dir, "trusted/0", "install -", "config-changed -", "credential-get 1 ok", "start -")
}

// waitLogLines waits for a line in a unit's hook log and returns the log.
func waitLogLines(t *testing.T, controllerDir, unit, line string) []string {
	t.Helper()
	waitLog(t, controllerDir, unit, line)
	return hookLog(t, controllerDir, unit)
}

func count(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == line {
			n++
		}
	}
	return n
}

// equalJSON compares decoded JSON values by their encoding (maps encode with sorted keys).
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
