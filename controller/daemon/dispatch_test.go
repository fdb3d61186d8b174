package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// A charm of the modern kind has no hooks/ at all, only dispatch: the agent runs it for every
// hook with JUJU_DISPATCH_PATH=hooks/<name>. These two share application data: the provider's
// leader publishes a token in relation-created, and the consumer reads it with
// relation-get --app. A second provider unit makes the leader change the application data
// once the consumers have long joined: they see relation-changed with no remote unit.
const dispatchProvider = `#!/bin/sh
set -e
echo "${JUJU_DISPATCH_PATH#hooks/} ${JUJU_REMOTE_UNIT:--}" >>hooks.log
case $JUJU_DISPATCH_PATH in
hooks/data-relation-created)
	if [ "$(is-leader)" = True ]; then relation-set -r "$JUJU_RELATION_ID" --app token=abc; fi
	status-set active "published"
	;;
hooks/peers-relation-created)
	relation-ids peers >peer-ids
	;;
hooks/peers-relation-joined)
	if [ "$(is-leader)" = True ]; then relation-set -r "$(relation-ids data)" --app peers=more; fi
	;;
esac
`

const dispatchConsumer = `#!/bin/sh
set -e
echo "${JUJU_DISPATCH_PATH#hooks/} ${JUJU_REMOTE_UNIT:--}" >>hooks.log
case $JUJU_DISPATCH_PATH in
hooks/install) status-set blocked "no token" ;;
hooks/data-relation-changed)
	token=$(relation-get -r "$JUJU_RELATION_ID" --app token "$JUJU_REMOTE_APP")
	[ -z "$token" ] || status-set active "token=$token"
	;;
esac
`

func dispatchCharm(t *testing.T, name, meta, dispatch string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metadata.yaml"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dispatch"), []byte(dispatch), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func deployDir(t *testing.T, c *client.Client, dir, app string, n int32) {
	t.Helper()
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", zipCharm(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: app, CharmUrl: up.Url, NumUnits: n,
		Base: &pb.Base{Name: "ubuntu", Channel: "24.04"}}); err != nil {
		t.Fatal(err)
	}
}

func TestDispatchCharmsShareApplicationData(t *testing.T) {
	c, _, dir := startController(t)
	deployDir(t, c, dispatchCharm(t, "provider",
		"name: provider\nsummary: p\nprovides:\n  data: {interface: token}\npeers:\n  peers: {interface: provider-peers}\n",
		dispatchProvider), "provider", 1)
	deployDir(t, c, dispatchCharm(t, "consumer",
		"name: consumer\nsummary: c\nrequires:\n  data: {interface: token}\n", dispatchConsumer), "consumer", 2)
	waitFor(t, c, "default", "consumers blocked", func(fs *pb.FullStatusResponse) bool {
		return workload("consumer/0", "blocked", "no token")(fs) && workload("consumer/1", "blocked", "no token")(fs)
	})
	integrate(t, c, "provider", "consumer")
	waitFor(t, c, "default", "consumers active with the token", func(fs *pb.FullStatusResponse) bool {
		return workload("consumer/0", "active", "token=abc")(fs) && workload("consumer/1", "active", "token=abc")(fs) &&
			workload("provider/0", "active", "published")(fs)
	})

	// Juju 3.6's order: relation-created for the peer relation before leader-elected. The
	// consumers may turn active before the provider has run its own joined and changed hooks.
	waitLog(t, dir, "provider/0", "install -", "peers-relation-created -", "leader-elected -",
		"config-changed -", "start -", "data-relation-created -", "data-relation-joined consumer/0", "data-relation-changed consumer/0")
	waitLog(t, dir, "consumer/0", "install -", "config-changed -", "start -", "data-relation-created -",
		"data-relation-joined provider/0", "data-relation-changed provider/0")

	// An application data change after joining is relation-changed with no remote unit.
	if _, err := c.AddUnits(context.Background(), &pb.AddUnitsRequest{Model: "default", Application: "provider", NumUnits: 1}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, dir, "consumer/0", "data-relation-changed provider/0", "data-relation-changed -")
	// relation-ids sees the peer relation from its first hooks.
	peerIDs := charmFile(t, dir, "provider/0", "peer-ids")
	if peerIDs != "peers:0\n" {
		t.Errorf("relation-ids peers in peers-relation-created: %q", peerIDs)
	}

	detail, err := c.ShowUnit(context.Background(), "default", "consumer/0")
	if err != nil {
		t.Fatal(err)
	}
	if len(detail.Relations) != 1 || detail.Relations[0].ApplicationData["token"] != "abc" {
		t.Errorf("show-unit consumer/0 application data: %v", detail.Relations)
	}
}

// waitLog waits until a unit's hook log holds these lines in order; it gives up once the log
// has not grown for 30 s, so a slow machine only makes it wait longer.
func waitLog(t *testing.T, controllerDir, unit string, want ...string) {
	t.Helper()
	var log []string
	last := time.Now()
	for !seq(log, want...) {
		if time.Since(last) > 30*time.Second {
			t.Fatalf("%s hooks: %v; want in order %v", unit, log, want)
		}
		time.Sleep(20 * time.Millisecond)
		if next := hookLog(t, controllerDir, unit); len(next) != len(log) {
			log, last = next, time.Now()
		}
	}
}

// charmFile reads a file a unit's charm wrote in its charm directory.
func charmFile(t *testing.T, controllerDir, unit, name string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(controllerDir, "instances", "*", "units", "unit-"+strings.ReplaceAll(unit, "/", "-"), "charm", name))
	if len(matches) != 1 {
		t.Fatalf("%s's %s: found %v", unit, name, matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
