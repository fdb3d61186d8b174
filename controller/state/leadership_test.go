package state_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

const leaseTTL = 30

func claim(t *testing.T, uuid, unit string, wantHeld bool, wantLeader string) {
	t.Helper()
	c, err := st.ClaimLeadership(context.Background(), uuid, unit, leaseTTL)
	if err != nil || c.Held != wantHeld || c.Leader != wantLeader {
		t.Fatalf("%s claims: %+v err %v; want %v %q", unit, c, err, wantHeld, wantLeader)
	}
	if c.Held && c.TTL != leaseTTL {
		t.Fatalf("%s claims: lease of %d s; want %d", unit, c.TTL, leaseTTL)
	}
}

// revokeLease ends the lease behind an application's leadership, as when its leader's agent
// stops extending it and it runs out.
func revokeLease(t *testing.T, uuid, app string) {
	t.Helper()
	ctx := context.Background()
	resp, err := st.Client().Get(ctx, state.ModelPrefix(uuid)+"leases/"+app)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("lease key of %s: %v %v", app, resp, err)
	}
	if _, err := st.Client().Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
}

func leaderOf(t *testing.T, uuid, app string) string {
	t.Helper()
	leader, err := st.Leader(context.Background(), uuid, app)
	if err != nil {
		t.Fatal(err)
	}
	return leader
}

func TestOneLeaderPerApplication(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 5)
	if l := leaderOf(t, uuid, "wordpress"); l != "" {
		t.Fatalf("leader before any claim: %q", l)
	}
	// Five agents claim at once: exactly one wins, and all agree who.
	var wg sync.WaitGroup
	type result struct {
		held   bool
		leader string
		err    error
	}
	results := make([]result, len(units))
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := st.ClaimLeadership(ctx, uuid, u, leaseTTL)
			results[i] = result{c.Held, c.Leader, err}
		}()
	}
	wg.Wait()
	winner := leaderOf(t, uuid, "wordpress")
	wins := 0
	for i, r := range results {
		if r.err != nil || r.leader != winner {
			t.Fatalf("%s: %+v, leader is %q", units[i], r, winner)
		}
		if r.held {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d units hold leadership", wins)
	}
	// The leader extends; the status snapshot shows it.
	claim(t, uuid, winner, true, winner)
	snap, err := st.Snapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Leaders["wordpress"] != winner {
		t.Fatalf("snapshot leaders = %v", snap.Leaders)
	}
	audit(t, uuid)
}

func TestLeadershipLeaseExpires(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	addUnits(t, uuid, "wordpress", 2)
	c, err := st.ClaimLeadership(ctx, uuid, "wordpress/0", 1)
	if err != nil || !c.Held {
		t.Fatalf("claim: %+v %v", c, err)
	}
	// Not extended, the lease runs out and the key goes with it.
	deadline := time.Now().Add(10 * time.Second)
	for leaderOf(t, uuid, "wordpress") != "" {
		if time.Now().After(deadline) {
			t.Fatal("lease did not expire")
		}
		time.Sleep(100 * time.Millisecond)
	}
	claim(t, uuid, "wordpress/1", true, "wordpress/1")
	claim(t, uuid, "wordpress/0", false, "wordpress/1")
	// The holder's lease ends (revoked: what running out does): the old leader may claim again.
	revokeLease(t, uuid, "wordpress")
	claim(t, uuid, "wordpress/0", true, "wordpress/0")
	audit(t, uuid)
}

func TestClaimLeadershipRefusals(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	if _, err := st.ClaimLeadership(ctx, uuid, "wordpress/7", leaseTTL); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("missing unit claims: %v", err)
	}
	if _, err := st.ClaimLeadership(ctx, uuid, units[0], 0); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("zero ttl: %v", err)
	}
	claim(t, uuid, units[0], true, units[0])
	// A dying leader gives leadership up on its next claim, so an alive unit takes over at
	// once; a dying unit never takes it.
	if _, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	claim(t, uuid, units[0], false, "")
	claim(t, uuid, units[1], true, units[1])
	claim(t, uuid, units[0], false, units[1])
	audit(t, uuid)
}

// Removing an application deletes its lease and leader settings (L-A3).
func TestApplicationRemovalDeletesLeadership_LA3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	claim(t, uuid, units[0], true, units[0])
	if err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if res, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil || res.Outcome != state.OutcomeDying {
		t.Fatalf("destroy: %v %v", res, err)
	}
	if _, err := st.SetUnitDying(ctx, uuid, units[0]); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, units[0])
	if _, err := st.Application(ctx, uuid, "wordpress"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("application still there: %v", err)
	}
	for _, k := range []string{"leases/wordpress", "leadersettings/wordpress"} {
		resp, err := st.Client().Get(ctx, state.ModelPrefix(uuid)+k)
		if err != nil || len(resp.Kvs) != 0 {
			t.Fatalf("%s left behind: %v %v", k, resp.Kvs, err)
		}
	}
	audit(t, uuid)
}

func TestLeaderSettingsOnlyByLeader(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	if err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "v"}); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("set with no leader: %v", err)
	}
	claim(t, uuid, units[0], true, units[0])
	if err := st.SetLeaderSettings(ctx, uuid, units[1], map[string]string{"k": "v"}); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("follower sets: %v", err)
	}
	if err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "v", "x": "1"}); err != nil {
		t.Fatal(err)
	}
	values, rev, err := st.LeaderSettings(ctx, uuid, "wordpress")
	if err != nil || fmt.Sprint(values) != "map[k:v x:1]" || rev == 0 {
		t.Fatalf("leader settings: %v %d %v", values, rev, err)
	}
	// Nothing new: nothing written, so followers see no leader-settings-changed.
	if err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "v", "gone": ""}); err != nil {
		t.Fatal(err)
	}
	if _, again, _ := st.LeaderSettings(ctx, uuid, "wordpress"); again != rev {
		t.Fatalf("no-op leader-set wrote: %d -> %d", rev, again)
	}
	if err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"x": ""}); err != nil {
		t.Fatal(err)
	}
	values, next, _ := st.LeaderSettings(ctx, uuid, "wordpress")
	if fmt.Sprint(values) != "map[k:v]" || next <= rev {
		t.Fatalf("after delete: %v %d", values, next)
	}
	app, err := st.ReadAgentApplication(ctx, uuid, "wordpress")
	if err != nil || app.Leader != units[0] || app.LeaderSettingsRevision != next {
		t.Fatalf("application leadership: %v %v", app, err)
	}
	// Its lease gone, the old leader may no longer write: Juju's words.
	revokeLease(t, uuid, "wordpress")
	err = st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "w"})
	want := `failed to merge leadership settings: application "wordpress": prerequisites failed: "wordpress/0" is not leader of "wordpress"`
	if !errors.Is(err, apierr.PermissionDenied) || err.Error() != want {
		t.Fatalf("ex-leader sets: %v", err)
	}
	if _, _, err := st.LeaderSettings(ctx, uuid, "nope"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("leader settings of a missing application: %v", err)
	}
	audit(t, uuid)
}

func TestSetApplicationStatusOnlyByLeader(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	claim(t, uuid, units[0], true, units[0])
	if err := st.SetApplicationStatus(ctx, uuid, units[1], "active", "ready"); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("follower sets application status: %v", err)
	}
	if err := st.SetApplicationStatus(ctx, uuid, units[0], "error", "boom"); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("error status accepted: %v", err)
	}
	if err := st.SetApplicationStatus(ctx, uuid, units[0], "blocked", "needs a database"); err != nil {
		t.Fatal(err)
	}
	app, err := st.Application(ctx, uuid, "wordpress")
	if err != nil || app.Status.GetStatus() != "blocked" || app.Status.GetMessage() != "needs a database" {
		t.Fatalf("application status: %v %v", app.GetStatus(), err)
	}
}

// Audit accepts the leadership keys and flags those of a missing application.
func TestAuditChecksLeadershipKeys(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	claim(t, uuid, units[0], true, units[0])
	if err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	audit(t, uuid)
	for _, k := range []string{"leases/ghost", "leadersettings/ghost"} {
		if _, err := st.Client().Put(ctx, state.ModelPrefix(uuid)+k, "ghost/0"); err != nil {
			t.Fatal(err)
		}
	}
	problems, err := st.Audit(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	want := "[application ghost: leader ghost/0 does not exist or is not its unit " +
		"application ghost: leadership key without a lease: it would never expire " +
		"leader settings of missing application ghost leadership of missing application ghost (held by ghost/0)]"
	if fmt.Sprint(problems) != want {
		t.Fatalf("audit = %q", problems)
	}
}

// Force-removing the leader frees leadership in the removal's transaction (L-F1).
func TestForceRemovingTheLeaderFreesLeadership_LF1(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	claim(t, uuid, units[1], true, units[1])
	if err := st.ForceRemoveUnit(ctx, uuid, units[1], time.Now().UnixNano()); err != nil {
		t.Fatal(err)
	}
	if l := leaderOf(t, uuid, "wordpress"); l != "" {
		t.Fatalf("leader after forced removal = %q", l)
	}
	claim(t, uuid, units[0], true, units[0])
	audit(t, uuid)
}

// A leader whose key lost its lease (never written so by ClaimLeadership) gets it back on a
// fresh lease when it extends, asserting the key unchanged meanwhile.
func TestClaimRenewsALeaselessKey(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	key := state.ModelPrefix(uuid) + "leases/wordpress"
	if _, err := st.Client().Put(ctx, key, units[0]); err != nil {
		t.Fatal(err)
	}
	claim(t, uuid, units[1], false, units[0])
	claim(t, uuid, units[0], true, units[0])
	resp, err := st.Client().Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("key after renewal: %v %v", resp, err)
	}
	audit(t, uuid)
}

// Nobody else can claim for the whole lease after the holder sent its claim (what its agent's
// guard counts on), nor after each extension; once the holder stops extending, the lease runs
// out, another unit claims, and the former leader's writes are refused.
func TestNobodyElseClaimsWithinTheLease(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	const ttl = 2
	sent := time.Now()
	if c, err := st.ClaimLeadership(ctx, uuid, units[0], ttl); err != nil || !c.Held || c.TTL != ttl {
		t.Fatalf("claim: %+v %v", c, err)
	}
	// A lease's worth, extended every half lease.
	for extensions := 0; extensions < 2; {
		if c, err := st.ClaimLeadership(ctx, uuid, units[1], ttl); err != nil || c.Held || c.Leader != units[0] {
			t.Fatalf("%v after the claim: %+v %v", time.Since(sent), c, err)
		}
		if time.Since(sent) >= ttl*time.Second/2 {
			sent = time.Now()
			if c, err := st.ClaimLeadership(ctx, uuid, units[0], ttl); err != nil || !c.Held || c.TTL != ttl {
				t.Fatalf("extension: %+v %v", c, err)
			}
			extensions++
		}
		time.Sleep(20 * time.Millisecond)
	}
	// No longer extended: nobody else until the lease runs out, then the other unit.
	for {
		c, err := st.ClaimLeadership(ctx, uuid, units[1], ttl)
		if err != nil {
			t.Fatal(err)
		}
		if c.Held {
			if since := time.Since(sent); since < ttl*time.Second {
				t.Fatalf("claimed %v after the holder's last extension was sent", since)
			}
			break
		}
		if time.Since(sent) > 10*time.Second {
			t.Fatal("the lease never ran out")
		}
		time.Sleep(20 * time.Millisecond)
	}
	err := st.SetLeaderSettings(ctx, uuid, units[0], map[string]string{"k": "v"})
	if !errors.Is(err, apierr.PermissionDenied) || !strings.Contains(err.Error(), `prerequisites failed: "wordpress/0" is not leader of "wordpress"`) {
		t.Fatalf("former leader sets: %v", err)
	}
	err = st.SetApplicationStatus(ctx, uuid, units[0], "active", "")
	if !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("former leader sets the application's status: %v", err)
	}
	audit(t, uuid)
}

// A lease shorter than the one asked for (granted when the lease duration was shorter) is
// replaced, not extended: the holder counts on the duration it is told.
func TestShortLeaseIsReplacedByTheLongerAskedFor(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	if c, err := st.ClaimLeadership(ctx, uuid, units[0], 5); err != nil || !c.Held || c.TTL != 5 {
		t.Fatalf("claim: %+v %v", c, err)
	}
	key := state.ModelPrefix(uuid) + "leases/wordpress"
	before, err := st.Client().Get(ctx, key)
	if err != nil || len(before.Kvs) != 1 {
		t.Fatal(before, err)
	}
	claim(t, uuid, units[0], true, units[0]) // leaseTTL
	after, err := st.Client().Get(ctx, key)
	if err != nil || len(after.Kvs) != 1 || after.Kvs[0].Lease == before.Kvs[0].Lease {
		t.Fatalf("key after: %v %v", after, err)
	}
	ttl, err := st.Client().TimeToLive(ctx, clientv3.LeaseID(after.Kvs[0].Lease))
	if err != nil || ttl.GrantedTTL != leaseTTL {
		t.Fatalf("new lease: %v %v", ttl, err)
	}
	if old, err := st.Client().TimeToLive(ctx, clientv3.LeaseID(before.Kvs[0].Lease)); err != nil || old.TTL != -1 {
		t.Fatalf("old lease still there: %v %v", old, err)
	}
	// A longer lease than asked for is kept, and its duration told.
	if c, err := st.ClaimLeadership(ctx, uuid, units[0], 5); err != nil || !c.Held || c.TTL != leaseTTL {
		t.Fatalf("shorter claim: %+v %v", c, err)
	}
	audit(t, uuid)
}
