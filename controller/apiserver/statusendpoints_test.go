package apiserver

import (
	"context"
	"slices"
	"testing"
)

// Status lists every endpoint of an application's charm, the implicit juju-info included,
// for show-application's endpoint-bindings.
func TestStatusListsCharmEndpoints(t *testing.T) {
	env := startTestEnv(t)
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nprovides:\n  db: mysql\npeers:\n  cluster: mysql-peers\nbases: [ubuntu@22.04]\n", 0)
	fs, err := env.admin.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Applications) != 1 || !slices.Equal(fs.Applications[0].GetEndpoints(), []string{"cluster", "db", "juju-info"}) {
		t.Errorf("endpoints = %v", fs.Applications)
	}
}
