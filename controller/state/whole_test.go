package state_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/names"
)

// storeKeys lists every key of a model with its mod revision: equal before and after a call
// means the call wrote nothing.
func storeKeys(t *testing.T, uuid string) []string {
	t.Helper()
	resp, err := st.Client().Get(context.Background(), state.ModelPrefix(uuid), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range resp.Kvs {
		out = append(out, fmt.Sprintf("%s@%d", strings.TrimPrefix(string(kv.Key), state.ModelPrefix(uuid)), kv.ModRevision))
	}
	return out
}

// countUnder counts a model's documents of one kind ("applications/", "units/", ...).
func countUnder(t *testing.T, uuid, kind string) int64 {
	t.Helper()
	resp, err := st.Client().Get(context.Background(), state.ModelPrefix(uuid)+kind, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// A refused deploy, add-unit or add-machine writes nothing at all: every check (the bound per
// call, the name, every placement, the base of every target machine, the size of the config)
// happens before the one transaction. Bad input of the issue: --to lxd:99, zone=x, 99999, a
// base mismatch, -n 100000000 and 4294967297, a 300-character name, a config over 1 MiB.
func TestRefusedCallsWriteNothing(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := st.AddCharm(ctx, uuid, charmZip(t, loggingMeta))
	if err != nil {
		t.Fatal(err)
	}
	jammy, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	focal, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@20.04"})
	if err != nil {
		t.Fatal(err)
	}
	dying, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyMachine(ctx, uuid, dying, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	// An application to add units to, with one unit already.
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "blog", CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 1}); err != nil {
		t.Fatal(err)
	}
	on := func(id string) []state.Placement { return []state.Placement{{Scope: "#", Directive: id}} }
	big := map[string]string{"motd": `"` + strings.Repeat("x", 1200<<10) + `"`}
	deployArgs := func(change func(a *state.DeployArgs)) state.DeployArgs {
		a := state.DeployArgs{Name: "wp", CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 1}
		change(&a)
		return a
	}

	tests := []struct {
		name string
		call func() error
		kind error
		msg  string
	}{
		{"deploy --to lxd:99", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Placements = []state.Placement{{Scope: "lxd", Directive: "99"}} }))
			return err
		}, apierr.NotSupported, `cannot add application "wp": lxd containers are not supported by the local provider`},
		{"deploy --to zone=x", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Placements = []state.Placement{{Directive: "zone=x"}} }))
			return err
		}, apierr.NotSupported, `cannot add application "wp": placement directive "zone=x" not supported by the local provider`},
		{"deploy --to 99999", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Placements = on("99999") }))
			return err
		}, apierr.NotFound, `cannot add application "wp": machine 99999 not found`},
		{"deploy --to a machine of another base", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Placements = on(focal) }))
			return err
		}, apierr.NotValid, fmt.Sprintf(`cannot add application "wp": machine %s has base ubuntu@20.04, application "wp" needs ubuntu@22.04`, focal)},
		{"deploy --to a dying machine", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Placements = on(dying) }))
			return err
		}, apierr.NotAlive, fmt.Sprintf(`cannot add application "wp": machine %s is not alive`, dying)},
		{"deploy -n 3 whose third placement is bad", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) {
				a.NumUnits = 3
				a.Placements = []state.Placement{{Scope: "#", Directive: jammy}, {}, {Scope: "#", Directive: "99999"}}
			}))
			return err
		}, apierr.NotFound, `cannot add application "wp": machine 99999 not found`},
		{"deploy -n 100000000", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.NumUnits = 100000000 }))
			return err
		}, apierr.NotValid, `cannot add application "wp": cannot add 100000000 units: at most 10000 per call`},
		{"deploy -n 10001", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.NumUnits = limits.MaxUnitsPerCall + 1 }))
			return err
		}, apierr.NotValid, `cannot add application "wp": cannot add 10001 units: at most 10000 per call`},
		{"deploy -n -1", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.NumUnits = -1 }))
			return err
		}, apierr.NotValid, `--num-units must be a positive integer`},
		{"deploy of a 300-character name", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Name = strings.Repeat("a", 300) }))
			return err
		}, apierr.NotValid, `invalid application name "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"...: 300 characters, at most 200`},
		{"deploy with a config over 1 MiB", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Config = big }))
			return err
		}, apierr.NotValid, `cannot add application "wp": config values of 1.2 MiB, more than the 1.0 MiB an application's config may hold`},
		{"deploy of an existing name", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.Name = "blog" }))
			return err
		}, apierr.AlreadyExists, `cannot add application "blog": application already exists`},
		{"deploy -n 1 of a subordinate", func() error {
			_, err := st.Deploy(ctx, uuid, deployArgs(func(a *state.DeployArgs) { a.CharmURL = sub.Url }))
			return err
		}, apierr.NotValid, `cannot use --num-units or --to with subordinate application`},
		{"add-unit --to 99999", func() error {
			_, err := st.AddUnits(ctx, uuid, "blog", 1, on("99999"))
			return err
		}, apierr.NotFound, `cannot add unit to application "blog": machine 99999 not found`},
		{"add-unit -n 2 whose second placement has another base", func() error {
			_, err := st.AddUnits(ctx, uuid, "blog", 2, []state.Placement{{Scope: "#", Directive: jammy}, {Scope: "#", Directive: focal}})
			return err
		}, apierr.NotValid, fmt.Sprintf(`cannot add unit to application "blog": machine %s has base ubuntu@20.04, application "blog" needs ubuntu@22.04`, focal)},
		{"add-unit --to lxd", func() error {
			_, err := st.AddUnits(ctx, uuid, "blog", 1, []state.Placement{{Scope: "lxd"}})
			return err
		}, apierr.NotSupported, `cannot add unit to application "blog": lxd containers are not supported by the local provider`},
		{"add-unit -n 100000000", func() error {
			_, err := st.AddUnits(ctx, uuid, "blog", 100000000, nil)
			return err
		}, apierr.NotValid, `cannot add unit to application "blog": cannot add 100000000 units: at most 10000 per call`},
		{"add-unit to a missing application", func() error {
			_, err := st.AddUnits(ctx, uuid, "nope", 1, nil)
			return err
		}, apierr.NotFound, `cannot add unit to application "nope": application "nope" not found`},
		{"add-machine -n 100000000", func() error {
			_, err := st.AddMachines(ctx, uuid, make([]state.MachineParams, 100000000))
			return err
		}, apierr.NotValid, `cannot add 100000000 machines: at most 10000 per call`},
		{"add-machine -n 0", func() error {
			_, err := st.AddMachines(ctx, uuid, nil)
			return err
		}, apierr.NotValid, `must add at least one machine`},
		{"add-machine -n 3 whose third base is bad", func() error {
			_, err := st.AddMachines(ctx, uuid, []state.MachineParams{{}, {Base: "ubuntu@24.04"}, {Base: "ubuntu"}})
			return err
		}, apierr.NotValid, ``},
		{"add-machine -n 2 whose second constraints are bad", func() error {
			_, err := st.AddMachines(ctx, uuid, []state.MachineParams{{}, {Constraints: "mem=lots"}})
			return err
		}, apierr.NotValid, ``},
		{"set a config over 1 MiB", func() error {
			return st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"motd": strings.Repeat("x", 1<<20)}, nil)
		}, apierr.NotValid, `config values of 1.1 MiB, more than the 1.0 MiB an application's config may hold`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := storeKeys(t, uuid)
			err := tt.call()
			if err == nil || !errors.Is(err, tt.kind) {
				t.Fatalf("error = %v, want %v", err, tt.kind)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Fatalf("error = %q, want %q", err, tt.msg)
			}
			if after := storeKeys(t, uuid); !slices.Equal(before, after) {
				t.Fatalf("a refused call wrote to the store:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
	if n := countUnder(t, uuid, "applications/"); n != 1 {
		t.Errorf("%d applications, want blog alone", n)
	}
	if n := countUnder(t, uuid, "units/"); n != 1 {
		t.Errorf("%d units, want blog/0 alone", n)
	}
	if n := countUnder(t, uuid, "machines/"); n != 4 {
		t.Errorf("%d machines, want 4", n)
	}
}

// A deploy is one transaction: the application, its peer relation, its units, the unit
// indexes and the new machines all carry the same revision, so a controller stopped at any
// point leaves all of it or none. The largest call allowed fits the store at once.
func TestDeployIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, wordpressMeta))
	if err != nil {
		t.Fatal(err)
	}
	jammy, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	n := limits.MaxUnitsPerCall
	app, units, err := st.AddApplication(ctx, uuid, state.DeployArgs{Name: "wordpress", CharmURL: ch.Url, Base: "ubuntu@22.04",
		NumUnits: n, Placements: []state.Placement{{Scope: "#", Directive: jammy}, {Scope: "#", Directive: jammy}}})
	if err != nil {
		t.Fatal(err)
	}
	if app.RelationCount != 1 || len(units) != n || units[0] != "wordpress/0" || units[n-1] != fmt.Sprintf("wordpress/%d", n-1) {
		t.Fatalf("application %v, %d units (%s..%s)", app, len(units), units[0], units[len(units)-1])
	}
	resp, err := st.Client().Get(ctx, state.ModelPrefix(uuid), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	revs := map[int64]int{}
	for _, kv := range resp.Kvs {
		key := strings.TrimPrefix(string(kv.Key), state.ModelPrefix(uuid))
		// What was there before the deploy.
		if key == "machines/"+jammy || key == "model" || strings.HasPrefix(key, "charms/") || strings.HasPrefix(key, "sequences/charm-") {
			continue
		}
		revs[kv.ModRevision]++
	}
	if len(revs) != 1 {
		t.Fatalf("the deploy's documents carry %d revisions: %v", len(revs), revs)
	}
	if got := countUnder(t, uuid, "units/"); got != int64(n) {
		t.Errorf("%d units", got)
	}
	// Two units on the existing machine, the rest on one new machine each.
	if got := countUnder(t, uuid, "machines/"); got != int64(n-2+1) {
		t.Errorf("%d machines", got)
	}
	if got := countUnder(t, uuid, "machineunits/"+jammy+"/"); got != 2 {
		t.Errorf("%d units on machine %s", got, jammy)
	}
	ids, err := st.AddMachines(ctx, uuid, make([]state.MachineParams, limits.MaxMachinesPerCall))
	if err != nil || len(ids) != limits.MaxMachinesPerCall {
		t.Fatalf("add-machine -n %d: %d, %v", limits.MaxMachinesPerCall, len(ids), err)
	}
}

// A change larger than etcd takes in one request is refused before it is sent, saying so; it is
// never cut. Here a long name makes each unit's documents large, and a config near its bound
// fills the rest.
func TestTooLargeForTheStoreIsRefused(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	name := "a" + strings.Repeat("b", names.MaxApplicationLength-1)
	config := map[string]string{"motd": `"` + strings.Repeat("x", 900<<10) + `"`}
	before := storeKeys(t, uuid)
	// The largest deploy fits the embedded store's 16 MiB: an external store's 1.5 MiB, here.
	state.LowerMaxBulkBytes(t, 3<<19)
	_, err = st.Deploy(ctx, uuid, state.DeployArgs{Name: name, CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 1000, Config: config})
	if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), "MiB, more than the 1.5 MiB the store takes at once") {
		t.Fatalf("error = %v", err)
	}
	t.Log(err)
	if after := storeKeys(t, uuid); !slices.Equal(before, after) {
		t.Fatalf("a refused deploy wrote to the store")
	}
	// The same with fewer units fits.
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: name, CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 10, Config: config}); err != nil {
		t.Fatal(err)
	}
}

// The state's bound on a bulk transaction stays within what the embedded etcd is started with.
func TestBulkTransactionsFitTheEmbeddedStore(t *testing.T) {
	if state.MaxBulkOps > store.MaxTxnOps {
		t.Fatalf("state allows %d operations, the embedded etcd %d", state.MaxBulkOps, store.MaxTxnOps)
	}
	// A unit with a new machine is three writes; a charm's peers and the guards take the rest.
	if 3*limits.MaxUnitsPerCall+100 > state.MaxBulkOps {
		t.Fatalf("%d units per call do not fit %d operations", limits.MaxUnitsPerCall, state.MaxBulkOps)
	}
}

// An external etcd started with its default --max-txn-ops (128) refuses a deploy of many units
// in one transaction; the refusal is a clear error and nothing is written, and a smaller deploy
// goes through.
func TestStoreWithDefaultTxnLimit(t *testing.T) {
	ctx := context.Background()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true
	urls := func() []url.URL {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return []url.URL{{Scheme: "http", Host: l.Addr().String()}}
	}
	cfg.ListenClientUrls, cfg.ListenPeerUrls = urls(), urls()
	cfg.AdvertiseClientUrls, cfg.AdvertisePeerUrls = cfg.ListenClientUrls, cfg.ListenPeerUrls
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if cfg.MaxTxnOps != 128 {
		t.Fatalf("etcd's default --max-txn-ops is %d", cfg.MaxTxnOps)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	<-e.Server.ReadyNotify()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cfg.ListenClientUrls[0].String()}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s := state.New(cli)
	m, err := s.AddModel(ctx, "small", "admin", "", "localhost", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.AddCharm(ctx, m.Uuid, charmZip(t, wordpressMeta))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Deploy(ctx, m.Uuid, state.DeployArgs{Name: "wordpress", CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 50})
	if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), "the store refuses a transaction of 156 operations (its --max-txn-ops is lower)") {
		t.Fatalf("deploy -n 50: %v", err)
	}
	if resp, err := cli.Get(ctx, state.ModelPrefix(m.Uuid)+"applications/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
		t.Fatalf("a refused deploy left applications: %v %v", resp, err)
	}
	if _, err := s.Deploy(ctx, m.Uuid, state.DeployArgs{Name: "wordpress", CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 40}); err != nil {
		t.Fatalf("deploy -n 40: %v", err)
	}
}
