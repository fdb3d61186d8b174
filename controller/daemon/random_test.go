package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/life"
)

// The randomized model-based test: several clients per model apply random sequences of
// deploy, add-unit, add-machine, integrate, retry-provisioning and every remove (with and
// without force) concurrently against a real controller with real agents. Some deploys and
// machines ask for constraints this host cannot meet, so some units sit on machines that never
// get an instance (L-M5). After each round the agents settle and the invariants must hold: life
// never went backwards, counts equal what exists, no scope or settings point at anything
// missing, nothing is stuck, and removing everything leaves nothing behind.
//
// The charms run their real hooks, so every removal also goes through the departing sequence,
// stop and remove.
//
// JUJU_RANDOM_ROUNDS sets the rounds per model (default 16: 8 models x 3 clients x 16 rounds is
// 384 sequences, about 3,000 operations, in make test; hooks make a round about seven times
// slower than it was without them); JUJU_RANDOM_SEED replays the operation choices of a run
// (the interleaving of the clients is the scheduler's).

const (
	randomModels  = 8
	randomClients = 3
	randomOps     = 8
)

var appCharms = map[string]string{
	"wp1": "wordpress", "wp2": "wordpress", "db1": "mysql", "db2": "mysql", "hp": "haproxy", "log": "logging",
}

var appNames = []string{"wp1", "wp2", "db1", "db2", "hp", "log"}

// unmeetable are constraints no host of the test meets (L-M5).
const unmeetable = "mem=100000G"

func TestRandomLifecycle(t *testing.T) {
	rounds := 16
	if v, err := strconv.Atoi(os.Getenv("JUJU_RANDOM_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("JUJU_RANDOM_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (JUJU_RANDOM_SEED=%d replays the operation choices), %d rounds", seed, seed, rounds)

	ext := externalStore(t)
	c, _, _ := startControllerWith(t, ext)
	st := state.New(ext.Client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lifeErrs := watchLifeNeverGoesBack(ctx, ext.Client)

	charms := map[string]string{}
	models := make([]string, randomModels)
	for i := range models {
		models[i] = fmt.Sprintf("random-%d", i)
		m, err := c.AddModel(ctx, models[i], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		models[i] = m.Uuid
		for _, ch := range []string{"wordpress", "mysql", "haproxy", "logging"} {
			up, err := c.UploadCharm(ctx, m.Uuid, zipCharm(t, filepath.Join(charmsDir(), ch)))
			if err != nil {
				t.Fatal(err)
			}
			charms[m.Uuid+"/"+ch] = up.Url
		}
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var sequences, ops int
	for i, uuid := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for round := 0; round < rounds; round++ {
				n, err := runRound(ctx, c, uuid, charms, rng)
				if err == nil {
					err = settleAndAudit(ctx, c, st, uuid)
				}
				if err == nil && round == rounds-1 || err == nil && rng.IntN(4) == 0 {
					// Remove everything, sometimes by force, and check nothing is left.
					err = removeAll(ctx, c, st, uuid, rng.IntN(2) == 0)
				}
				mu.Lock()
				sequences += randomClients
				ops += n
				if err != nil {
					failures = append(failures, fmt.Sprintf("model %d round %d: %v", i, round, err))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	for err := range lifeErrs {
		failures = append(failures, err)
	}
	t.Logf("%d sequences, %d operations", sequences, ops)
	for _, f := range failures {
		t.Error(f)
	}
}

// runRound runs randomClients clients at once, each a random sequence of randomOps operations.
// Errors the rules call for (not found, not alive, already exists, ...) are part of the game;
// anything else fails the round.
func runRound(ctx context.Context, c *client.Client, uuid string, charms map[string]string, rng *rand.Rand) (int, error) {
	seeds := make([]uint64, randomClients)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	errs := make(chan error, randomClients)
	var wg sync.WaitGroup
	for _, s := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(s, s>>1))
			for i := 0; i < randomOps; i++ {
				if err := randomOp(ctx, c, uuid, charms, r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return randomClients * randomOps, <-errs
}

func expected(err error) bool {
	for _, e := range []error{apierr.NotFound, apierr.NotAlive, apierr.AlreadyExists, apierr.NotValid,
		apierr.NotSupported, apierr.HasAssignedUnits, apierr.Contention} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func randomOp(ctx context.Context, c *client.Client, uuid string, charms map[string]string, r *rand.Rand) error {
	fs, err := c.FullStatus(ctx, uuid, nil)
	if err != nil {
		return err
	}
	var units, machines []string
	var rels []int64
	for _, a := range fs.Applications {
		for _, u := range a.Units {
			units = append(units, u.Name)
		}
	}
	for _, m := range fs.Machines {
		machines = append(machines, m.Id)
	}
	for _, rel := range fs.Relations {
		rels = append(rels, rel.Id)
	}
	pick := func(list []string, fallback string) string {
		if len(list) == 0 || r.IntN(10) == 0 {
			return fallback
		}
		return list[r.IntN(len(list))]
	}
	force := r.IntN(3) == 0
	remove := &pb.RemoveRequest{Model: uuid, Force: force, NoWait: force && r.IntN(2) == 0}
	app := appNames[r.IntN(len(appNames))]
	var opErr error
	var results []*pb.RemoveResult
	// Now and then, constraints no machine here can meet: those machines get a provisioning
	// error and never an instance, and their units never an agent (L-M5), yet removing them,
	// their applications and their machines must still finish (L-F2).
	var cons string
	if r.IntN(5) == 0 {
		cons = unmeetable
	}
	switch op := r.IntN(11); op {
	case 0, 1:
		n := int32(r.IntN(3))
		if appCharms[app] == "logging" {
			n, cons = 0, ""
		}
		_, opErr = c.Deploy(ctx, &pb.DeployRequest{Model: uuid, Application: app, CharmUrl: charms[uuid+"/"+appCharms[app]],
			NumUnits: n, Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, Constraints: cons})
	case 2:
		_, opErr = c.AddUnits(ctx, &pb.AddUnitsRequest{Model: uuid, Application: app, NumUnits: int32(1 + r.IntN(2))})
	case 3, 4:
		other := appNames[r.IntN(len(appNames))]
		_, opErr = c.Integrate(ctx, uuid, []string{app, other})
	case 5:
		remove.Names = []string{pick(units, "wp1/99")}
		results, opErr = c.RemoveUnits(ctx, remove)
	case 6:
		remove.Names = []string{app}
		results, opErr = c.RemoveApplications(ctx, remove)
	case 7:
		id := int64(99)
		if len(rels) > 0 && r.IntN(10) > 0 {
			id = rels[r.IntN(len(rels))]
		}
		_, opErr = c.RemoveRelation(ctx, &pb.RemoveRelationRequest{Model: uuid, ById: true, Id: id, Force: force, NoWait: remove.NoWait})
	case 8:
		remove.Names = []string{pick(machines, "99")}
		results, opErr = c.RemoveMachines(ctx, remove)
	case 9:
		_, opErr = c.AddMachines(ctx, &pb.AddMachinesRequest{Model: uuid, Params: []*pb.AddMachineParams{{Constraints: cons}}})
	case 10:
		// resolved on a machine: with constraints this host meets it gets its instance (and its
		// unit an agent), racing the provisioner's removal of the units nobody wants any more.
		retry := &pb.RetryProvisioningRequest{Model: uuid, Machines: []string{pick(machines, "99")}}
		if r.IntN(2) == 0 {
			retry.Constraints, retry.ReplaceConstraints = "mem=1M", true
		}
		results, opErr = c.RetryProvisioning(ctx, retry)
	}
	if opErr != nil && !expected(opErr) {
		return fmt.Errorf("unexpected error: %w", opErr)
	}
	for _, res := range results {
		if res.Error != "" && !strings.Contains(res.Error, "does not exist") && !strings.Contains(res.Error, "not found") &&
			!strings.Contains(res.Error, "subordinate") && !strings.Contains(res.Error, "assigned") &&
			!strings.Contains(res.Error, "try again") && !strings.Contains(res.Error, "not in an error state") &&
			!strings.Contains(res.Error, "not alive") {
			return fmt.Errorf("unexpected removal error: %s", res.Error)
		}
	}
	return nil
}

// settleQuiet is how long a model of the randomized test may stand still before it counts as
// stuck: longer than waitQuiet, as eight models share two cores.
const settleQuiet = 45 * time.Second

// settleAndAudit waits until nothing is dying or dead and every alive unit is idle and in the
// scope of each relation it belongs in (units on machines whose provisioning failed wait for
// `juju resolved`, L-M5, and count as settled), then checks the model's references and counts.
// It waits for progress, not for a fixed time (waitModel): it fails only once the model has
// stopped moving, and then says what is stuck and why. The audit runs on every check: references
// must be right at every revision it sees, not only once settled.
func settleAndAudit(ctx context.Context, c *client.Client, st *state.State, uuid string) error {
	var pending []string
	err := waitModel(ctx, c, uuid, settleQuiet, waitLimit, func() (bool, error) {
		problems, err := st.Audit(ctx, uuid)
		if err != nil {
			return false, err
		}
		if len(problems) > 0 {
			return false, fmt.Errorf("audit: %s", strings.Join(problems, "; "))
		}
		if pending, err = st.Remaining(ctx, uuid); err != nil || len(pending) > 0 {
			return false, err
		}
		pending, err = unsettledUnits(ctx, c, st, uuid)
		return len(pending) == 0, err
	})
	if errors.Is(err, errNotSettled) {
		return fmt.Errorf("%w\n  waiting for: %s", err, strings.Join(pending, "; "))
	}
	return err
}

// unsettledUnits lists machines not provisioned yet, and alive units that are not idle or not in
// a scope they should be in; machines whose provisioning failed, and their units, are settled.
func unsettledUnits(ctx context.Context, c *client.Client, st *state.State, uuid string) ([]string, error) {
	fs, err := c.FullStatus(ctx, uuid, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	failed := map[string]bool{}
	for _, m := range fs.Machines {
		switch {
		case failedProvisioning(m):
			failed[m.Id] = true
		case m.InstanceId == "":
			out = append(out, "machine "+m.Id+" not provisioned")
		}
	}
	for _, a := range fs.Applications {
		for _, u := range a.Units {
			if u.Principal == "" && failed[u.Machine] {
				continue // never deployed: waits for its machine (L-M5)
			}
			if u.AgentStatus.GetStatus() != "idle" {
				out = append(out, u.Name+" is "+u.AgentStatus.GetStatus())
				continue
			}
			rels, err := st.UnitRelations(ctx, uuid, u.Name, nil)
			if err != nil {
				return nil, err
			}
			for _, ur := range rels {
				if ur.ShouldJoin && !ur.InScope {
					out = append(out, fmt.Sprintf("%s not in relation %d", u.Name, ur.Relation.Id))
				}
			}
		}
	}
	return out, nil
}

// removeAll removes every application and machine and checks that nothing is left: no
// document, scope, settings or index of anything removed.
func removeAll(ctx context.Context, c *client.Client, st *state.State, uuid string, force bool) error {
	fs, err := c.FullStatus(ctx, uuid, nil)
	if err != nil {
		return err
	}
	req := &pb.RemoveRequest{Model: uuid, Force: force, NoWait: force}
	for _, a := range fs.Applications {
		req.Names = append(req.Names, a.Name)
	}
	if err := removeErrors(c.RemoveApplications(ctx, req)); err != nil {
		return err
	}
	if err := waitEmpty(ctx, c, uuid, func(fs *pb.FullStatusResponse) bool { return len(fs.Applications) == 0 }); err != nil {
		return err
	}
	req.Names = nil
	for _, m := range fs.Machines {
		req.Names = append(req.Names, m.Id)
	}
	fs, err = c.FullStatus(ctx, uuid, nil)
	if err != nil {
		return err
	}
	req.Names = nil
	for _, m := range fs.Machines {
		req.Names = append(req.Names, m.Id)
	}
	if err := removeErrors(c.RemoveMachines(ctx, req)); err != nil {
		return err
	}
	if err := waitEmpty(ctx, c, uuid, func(fs *pb.FullStatusResponse) bool { return len(fs.Machines) == 0 }); err != nil {
		return err
	}
	if err := settleAndAudit(ctx, c, st, uuid); err != nil {
		return err
	}
	// Everything removed is gone: only the model document, charms and counters stay.
	resp, err := st.Client().Get(ctx, state.ModelPrefix(uuid), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return err
	}
	for _, kv := range resp.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), state.ModelPrefix(uuid))
		if rest != "model" && !strings.HasPrefix(rest, "charms/") && !strings.HasPrefix(rest, "sequences/") {
			return fmt.Errorf("left behind after removing everything: %s", rest)
		}
	}
	return nil
}

func removeErrors(results []*pb.RemoveResult, err error) error {
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Error != "" {
			return fmt.Errorf("removing %s: %s", r.Name, r.Error)
		}
	}
	return nil
}

// waitEmpty waits until ok holds for the model's status, for as long as the model moves.
func waitEmpty(ctx context.Context, c *client.Client, uuid string, ok func(*pb.FullStatusResponse) bool) error {
	if _, err := waitStatus(ctx, c, uuid, settleQuiet, waitLimit, ok); err != nil {
		return fmt.Errorf("removal did not finish: %w", err)
	}
	return nil
}

// watchLifeNeverGoesBack watches every model document with its previous value and reports each
// change that moves a life backwards (L-G1). The channel closes when ctx ends.
func watchLifeNeverGoesBack(ctx context.Context, cli *clientv3.Client) <-chan string {
	out := make(chan string, 100)
	wc := cli.Watch(ctx, "/juju/models/", clientv3.WithPrefix(), clientv3.WithPrevKV())
	go func() {
		defer close(out)
		for resp := range wc {
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut || ev.PrevKv == nil {
					continue
				}
				key := string(ev.Kv.Key)
				before, after := docLife(key, ev.PrevKv.Value), docLife(key, ev.Kv.Value)
				if before != "" && after != "" && !life.CanMove(life.Life(before), life.Life(after)) {
					select {
					case out <- fmt.Sprintf("%s: life went from %s to %s", key, before, after):
					default:
					}
				}
			}
		}
	}()
	return out
}

func docLife(key string, value []byte) string {
	var doc interface {
		proto.Message
		GetLife() string
	}
	switch {
	case strings.Contains(key, "/machines/"):
		doc = &storepb.Machine{}
	case strings.Contains(key, "/applications/"):
		doc = &storepb.Application{}
	case strings.Contains(key, "/units/"):
		doc = &storepb.Unit{}
	case strings.Contains(key, "/relations/"):
		doc = &storepb.Relation{}
	case strings.Contains(key, "/machineunits/"):
		return string(value)
	default:
		return ""
	}
	if proto.Unmarshal(value, doc) != nil {
		return ""
	}
	return doc.GetLife()
}
