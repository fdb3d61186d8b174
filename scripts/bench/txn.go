package main

// The lifecycle transaction figure: how many lifecycle transactions per second controller/state
// commits, against the floor of the same embedded etcd (fsync on) and the same loopback TCP client
// doing the bare transaction of the reference limits (limits.md §2.3) (compare + 3 puts).

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/core/life"
)

const (
	txnRuns        = 5               // fresh etcd and data dir per run, as limits.md §2.3
	floorWarmup    = 50              // untimed transactions before the floor is timed
	floorDuration  = 3 * time.Second // how long the floor loop runs
	lifecycleUnits = 1000            // units taken through the lifecycle per run (5 txns each)
	lifecycleWarm  = 20              // of which the first ones are untimed
)

// lifecycleOps names the timed transactions, in the order each unit goes through them.
var lifecycleOps = []string{"EnterScope", "LeaveScope", "DestroyUnit", "EnsureUnitDead", "RemoveUnit"}

// txnRun is one run's result.
type txnRun struct {
	floor, lifecycle float64 // txn/s
	perOp            map[string]opCost
}

// opCost is the mean cost of one lifecycle call: all of it, and its reads and its commit.
type opCost struct {
	total, reads, commit time.Duration
	nReads               float64
}

// kvStats times what controller/state asks of etcd: reads (Get) and commits (Txn).
type kvStats struct {
	reads, commits   time.Duration
	nReads, nCommits int
}

// timedKV wraps the client's KV so the lifecycle loop can tell reads from commits.
type timedKV struct {
	clientv3.KV
	st *kvStats
}

func (k timedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	t := time.Now()
	r, err := k.KV.Get(ctx, key, opts...)
	k.st.reads += time.Since(t)
	k.st.nReads++
	return r, err
}

func (k timedKV) Txn(ctx context.Context) clientv3.Txn { return timedTxn{k.KV.Txn(ctx), k.st, false} }

// timedTxn counts a transaction of gets only (controller/state's read-ahead) as a read, any
// other as a commit.
type timedTxn struct {
	clientv3.Txn
	st    *kvStats
	write bool
}

func (t timedTxn) If(cs ...clientv3.Cmp) clientv3.Txn { return timedTxn{t.Txn.If(cs...), t.st, true} }
func (t timedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	write := t.write
	for _, op := range ops {
		write = write || !op.IsGet()
	}
	return timedTxn{t.Txn.Then(ops...), t.st, write}
}
func (t timedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	return timedTxn{t.Txn.Else(ops...), t.st, t.write}
}
func (t timedTxn) Commit() (*clientv3.TxnResponse, error) {
	start := time.Now()
	r, err := t.Txn.Commit()
	if !t.write {
		t.st.reads += time.Since(start)
		t.st.nReads++
		return r, err
	}
	t.st.commits += time.Since(start)
	t.st.nCommits++
	return r, err
}

// measureTxn runs the floor and the lifecycle loop txnRuns times and adds their rows.
func measureTxn() error {
	wordpress, err := zipCharmDir(filepath.Join(root, "testdata", "charms", "wordpress"))
	if err != nil {
		return err
	}
	mysql, err := zipCharmDir(filepath.Join(root, "testdata", "charms", "mysql"))
	if err != nil {
		return err
	}
	var floors, lifecycles []float64
	perOp := map[string][]opCost{}
	for i := 0; i < txnRuns; i++ {
		r, err := txnOnce(i, wordpress, mysql)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "txn run %d: floor %.0f txn/s, lifecycle %.0f txn/s (%.0f%%)\n",
			i+1, r.floor, r.lifecycle, 100*r.lifecycle/r.floor)
		floors = append(floors, r.floor)
		lifecycles = append(lifecycles, r.lifecycle)
		for op, d := range r.perOp {
			perOp[op] = append(perOp[op], d)
		}
	}
	floor, lc := midF(floors), midF(lifecycles)
	var lat []string
	for _, op := range lifecycleOps {
		var total, reads, commit []time.Duration
		var nReads []float64
		for _, c := range perOp[op] {
			total, reads, commit, nReads = append(total, c.total), append(reads, c.reads), append(commit, c.commit), append(nReads, c.nReads)
		}
		lat = append(lat, fmt.Sprintf("%s %s (%s %s, commit %s)", op, fmtUs(mid(total)), plural(int(midF(nReads)+0.5), "read"), fmtUs(mid(reads)), fmtUs(mid(commit))))
	}
	rows = append(rows,
		row{what: fmt.Sprintf("baseline: etcd Txn floor, compare + 3 puts of 100 B, 1 loopback TCP client, fsync (%d runs × %.0f s)", txnRuns, floorDuration.Seconds()),
			value: fmt.Sprintf("%s txn/s", thousands(floor))},
		row{what: fmt.Sprintf("lifecycle transactions through controller/state, same etcd and client (%d runs × %d units × 5)", txnRuns, lifecycleUnits-lifecycleWarm),
			budget: "≥ 50 % of floor", value: fmt.Sprintf("%s txn/s", thousands(lc)), ratio: fmt.Sprintf("%.0f %%", 100*lc/floor)})
	notes = append(notes,
		fmt.Sprintf("Txn floor: the transaction of the reference limits (limits.md §2.3), measured in this run on a fresh embedded etcd (fsync on) "+
			"with its loopback TCP client (store.StartEmbedded; the controller uses the same); limits.md's matching row is \"clientv3 over loopback TCP, 1 client, fsync: 1,906 txn/s\" "+
			"(5 × 10 s there, %d × %.0f s here); the ratio uses this run's floor.", txnRuns, floorDuration.Seconds()),
		fmt.Sprintf("Lifecycle transactions: on the same etcd and client, each of %d units (of wordpress, deployed, machine provisioned, related to mysql) ", lifecycleUnits-lifecycleWarm)+
			"goes through EnterScope, LeaveScope, DestroyUnit (to dying), EnsureUnitDead and RemoveUnit, one committed transaction each "+
			"(checked by the store revision), newest unit first so that, as in a real removal, the unit removed is rarely the leader "+
			"(the leader's RemoveUnit also lists the application's units to pick the next one); the reads each call makes before committing count in its cost. "+
			"Median cost per call, with its reads and its commit: "+strings.Join(lat, "; ")+".")
	return nil
}

func txnOnce(run int, wordpress, mysql []byte) (txnRun, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "juju-bench-etcd-")
	if err != nil {
		return txnRun{}, err
	}
	defer os.RemoveAll(dir)
	s, err := store.StartEmbedded(ctx, dir, store.EmbeddedOptions{}) // fsync on
	if err != nil {
		return txnRun{}, err
	}
	defer s.Close()

	floor, err := txnFloor(ctx, s.Client)
	if err != nil {
		return txnRun{}, err
	}

	stats := &kvStats{}
	s.Client.KV = timedKV{s.Client.KV, stats}
	st := state.New(s.Client)
	m, err := st.AddModel(ctx, fmt.Sprintf("txn%d", run), "admin", "", "localhost", "localhost")
	if err != nil {
		return txnRun{}, err
	}
	uuid := m.Uuid
	relID, units, err := lifecycleSetup(ctx, st, uuid, wordpress, mysql)
	if err != nil {
		return txnRun{}, err
	}
	steps := func(name string) []func() error { return lifecycleSteps(ctx, st, uuid, relID, name) }
	// Newest first: as in a real removal, the unit going is rarely the leader (wordpress/0, the
	// last one here), whose removal also looks for the next leader.
	slices.Reverse(units)
	for _, name := range units[:lifecycleWarm] {
		for _, step := range steps(name) {
			if err := step(); err != nil {
				return txnRun{}, err
			}
		}
	}
	rev0, err := st.Revision(ctx)
	if err != nil {
		return txnRun{}, err
	}
	spent := make([]opCost, len(lifecycleOps))
	start := time.Now()
	for _, name := range units[lifecycleWarm:] {
		for i, step := range steps(name) {
			before := *stats
			t := time.Now()
			if err := step(); err != nil {
				return txnRun{}, err
			}
			spent[i].total += time.Since(t)
			spent[i].reads += stats.reads - before.reads
			spent[i].commit += stats.commits - before.commits
			spent[i].nReads += float64(stats.nReads - before.nReads)
			if c := stats.nCommits - before.nCommits; c != 1 {
				return txnRun{}, fmt.Errorf("%s of %s: %d commits, want 1", lifecycleOps[i], name, c)
			}
		}
	}
	elapsed := time.Since(start)
	rev1, err := st.Revision(ctx)
	if err != nil {
		return txnRun{}, err
	}
	n := len(units[lifecycleWarm:]) * len(lifecycleOps)
	if int(rev1-rev0) != n {
		return txnRun{}, fmt.Errorf("lifecycle loop: %d calls committed %d transactions", n, rev1-rev0)
	}
	if _, err := st.Unit(ctx, uuid, units[len(units)-1]); err == nil {
		return txnRun{}, fmt.Errorf("lifecycle loop: unit %s still there", units[len(units)-1])
	}
	r := txnRun{floor: floor, lifecycle: float64(n) / elapsed.Seconds(), perOp: map[string]opCost{}}
	k := len(units[lifecycleWarm:])
	for i, op := range lifecycleOps {
		c := spent[i]
		r.perOp[op] = opCost{total: c.total / time.Duration(k), reads: c.reads / time.Duration(k),
			commit: c.commit / time.Duration(k), nReads: c.nReads / float64(k)}
	}
	return r, nil
}

// txnFloor is limits.md §2.3: If(ModRevision(k0) == rev) Then(Put k0, k1, k2) with 100-byte
// values, rev taken from each response so every compare succeeds.
func txnFloor(ctx context.Context, cli *clientv3.Client) (float64, error) {
	keys := []string{"/bench/floor/k0", "/bench/floor/k1", "/bench/floor/k2"}
	value := strings.Repeat("v", 100)
	var rev int64
	txn := func() error {
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(keys[0]), "=", rev)).
			Then(clientv3.OpPut(keys[0], value), clientv3.OpPut(keys[1], value), clientv3.OpPut(keys[2], value)).
			Commit()
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return fmt.Errorf("floor txn: compare failed at revision %d", rev)
		}
		rev = resp.Header.Revision
		return nil
	}
	for i := 0; i < floorWarmup; i++ {
		if err := txn(); err != nil {
			return 0, err
		}
	}
	n := 0
	start := time.Now()
	for time.Since(start) < floorDuration {
		if err := txn(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// lifecycleSetup deploys wordpress (lifecycleUnits units, each on its own provisioned machine,
// each with an agent password) and mysql (one unit, in the relation's scope), relates them and
// returns the relation and wordpress's units.
func lifecycleSetup(ctx context.Context, st *state.State, uuid string, wordpress, mysql []byte) (int64, []string, error) {
	for _, app := range []struct {
		name    string
		archive []byte
	}{{"wordpress", wordpress}, {"mysql", mysql}} {
		ch, err := st.AddCharm(ctx, uuid, app.archive)
		if err != nil {
			return 0, nil, err
		}
		if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: app.name, CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
			return 0, nil, err
		}
	}
	rel, err := st.Integrate(ctx, uuid, state.EndpointSpec{Application: "wordpress"}, state.EndpointSpec{Application: "mysql"})
	if err != nil {
		return 0, nil, err
	}
	units, err := st.AddUnits(ctx, uuid, "wordpress", lifecycleUnits, nil)
	if err != nil {
		return 0, nil, err
	}
	db, err := st.AddUnits(ctx, uuid, "mysql", 1, nil)
	if err != nil {
		return 0, nil, err
	}
	hash := state.HashPassword("bench")
	for _, name := range append(units, db...) {
		u, err := st.Unit(ctx, uuid, name)
		if err != nil {
			return 0, nil, err
		}
		inst := state.Instance{ID: "bench-" + u.MachineId, Hardware: "arch=amd64", DNSName: "127.0.0.1", Hostname: "bench"}
		if err := st.SetProvisioned(ctx, uuid, u.MachineId, inst, hash); err != nil {
			return 0, nil, err
		}
		if err := st.SetUnitPassword(ctx, uuid, name, hash); err != nil {
			return 0, nil, err
		}
	}
	if _, err := st.EnterScope(ctx, uuid, rel.Id, db[0], map[string]string{"private-address": "127.0.0.1"}); err != nil {
		return 0, nil, err
	}
	return rel.Id, units, nil
}

// zipCharmDir archives a charm directory's regular files, as juju deploy uploads it.
func zipCharmDir(dir string) ([]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		f, err := zw.Create(e.Name())
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func fmtUs(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func midF(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// thousands formats n with a comma every three digits, as the reference does (3,631).
func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// lifecycleSteps are the five transactions of one unit's life the txn and HA figures time:
// enter and leave a relation's scope, dying, dead, removed.
func lifecycleSteps(ctx context.Context, st *state.State, uuid string, relID int64, name string) []func() error {
	return []func() error{
		func() error {
			_, err := st.EnterScope(ctx, uuid, relID, name, map[string]string{"private-address": "127.0.0.1"})
			return err
		},
		func() error { return st.LeaveScope(ctx, uuid, relID, name) },
		func() error {
			r, err := st.DestroyUnit(ctx, uuid, name, state.DestroyOptions{})
			if err == nil && r.Outcome != state.OutcomeDying {
				err = fmt.Errorf("DestroyUnit %s: outcome %s, want dying", name, r.Outcome)
			}
			return err
		},
		func() error {
			l, err := st.EnsureUnitDead(ctx, uuid, name)
			if err == nil && l != string(life.Dead) {
				err = fmt.Errorf("EnsureUnitDead %s: life %s, want dead", name, l)
			}
			return err
		},
		func() error { return st.RemoveUnit(ctx, uuid, name) },
	}
}
