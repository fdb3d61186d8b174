package state

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// Leadership: one leader per application, held as an etcd lease. The key leases/<app> names
// the leading unit and is attached to a lease its agent keeps extending, whatever hooks run;
// when the agent stops extending (it died, its machine went away) etcd deletes the key and
// another unit's agent, watching it, claims. The holder's agent stops counting itself leader a
// guard time before the lease can run out (controller/agent/leadership.go), so two units never
// both believe they lead. Leader-only writes assert the key in their transaction, so a former
// leader's write is refused. Leader settings live beside it in leadersettings/<app>.

func leaseKey(uuid, app string) string { return ModelPrefix(uuid) + "leases/" + app }
func leaderSettingsKey(uuid, app string) string {
	return ModelPrefix(uuid) + "leadersettings/" + app
}

// deleteApplication deletes an application's document and what lives beside it: its
// leadership lease key and its leader settings (L-A3).
func (w *writes) deleteApplication(uuid, name string) {
	w.del(applicationKey(uuid, name))
	w.del(leaseKey(uuid, name))
	w.del(leaderSettingsKey(uuid, name))
	w.deleteApplicationResources(uuid, name)
}

// releaseLeadership deletes the lease key when u leads its application, asserting (through r)
// that it still does, so that another unit's agent can claim at once rather than when the lease
// runs out. Removing a unit does this in its own transaction.
func (r *reader) releaseLeadership(ctx context.Context, w *writes, uuid string, u *storepb.Unit) error {
	leader, held, err := r.getRaw(ctx, leaseKey(uuid, u.Application))
	if err != nil {
		return err
	}
	if held && leader == u.Name {
		w.del(leaseKey(uuid, u.Application))
	}
	return nil
}

// LeadershipClaim is the outcome of a claim: whether the unit holds the leadership, who does,
// and for how long the lease now runs.
type LeadershipClaim struct {
	Held   bool
	Leader string
	// TTL is the lease's duration in seconds, counted by etcd from the moment it granted or
	// extended it (so after the claim was sent): the holder leads at least that long after
	// sending the claim. It is the ttl asked for, or more when etcd raised it to its minimum.
	TTL int64
}

// ClaimLeadership claims the leadership of unit's application for ttl seconds, or extends it
// when unit holds it already. Only an alive unit of an alive or dying application takes or
// extends leadership; a unit that is not alive gives up the leadership it holds, so that an
// alive unit can take over at once.
//
// Extending costs one read transaction and one lease keep-alive: nothing is written to the
// key. Nobody else can claim until etcd deletes the key, when the lease runs out.
func (s *State) ClaimLeadership(ctx context.Context, uuid, unit string, ttl int64) (LeadershipClaim, error) {
	if ttl <= 0 {
		return LeadershipClaim{}, apierr.Errorf(apierr.NotValid, "leadership lease of %d seconds not valid", ttl)
	}
	app, err := names.UnitApplication(unit)
	if err != nil {
		return LeadershipClaim{}, apierr.Errorf(apierr.NotValid, "unit name %q not valid", unit)
	}
	what := fmt.Sprintf("unit %q cannot claim leadership of %q", unit, app)
	key := leaseKey(uuid, app)
	for attempt := 0; attempt < maxAttempts; attempt++ {
		resp, err := s.kv.Txn(ctx).Then(
			clientv3.OpGet(unitKey(uuid, unit)), clientv3.OpGet(applicationKey(uuid, app)), clientv3.OpGet(key),
		).Commit()
		if err != nil {
			return LeadershipClaim{}, fmt.Errorf("%s: %w", what, err)
		}
		kvs := make([]*mvccpb.KeyValue, 3)
		for i, r := range resp.Responses {
			if got := r.GetResponseRange().GetKvs(); len(got) > 0 {
				kvs[i] = got[0]
			}
		}
		ukv, akv, lkv := kvs[0], kvs[1], kvs[2]
		if ukv == nil {
			return LeadershipClaim{}, apierr.Errorf(apierr.NotFound, "%s: unit not found", what)
		}
		if akv == nil {
			return LeadershipClaim{}, apierr.Errorf(apierr.NotFound, "%s: application not found", what)
		}
		u, a := &storepb.Unit{}, &storepb.Application{}
		if err := unmarshal(ukv, u); err != nil {
			return LeadershipClaim{}, err
		}
		if err := unmarshal(akv, a); err != nil {
			return LeadershipClaim{}, err
		}
		holder := ""
		if lkv != nil {
			holder = string(lkv.Value)
		}
		if u.Life != string(life.Alive) || a.Life == string(life.Dead) {
			if holder != unit {
				return LeadershipClaim{Leader: holder}, nil
			}
			return LeadershipClaim{}, s.giveUpLeadership(ctx, unit, key, lkv)
		}
		switch {
		case holder == unit && lkv.Lease != 0:
			alive, err := s.kv.KeepAliveOnce(ctx, clientv3.LeaseID(lkv.Lease))
			if err == nil && alive.TTL >= ttl {
				return LeadershipClaim{Held: true, Leader: unit, TTL: alive.TTL}, nil
			}
			if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
				return LeadershipClaim{}, fmt.Errorf("%s: extending lease: %w", what, err)
			}
			// The lease ran out just now, or it is shorter than asked for (granted before
			// the lease duration was raised): put the key on a new one, asserting nobody took
			// it meanwhile (its revision unchanged: a lapsed lease deletes the key, which
			// fails the assertion, and the next read sees who holds it now).
		case holder == unit, holder == "":
			// Unit's key without a lease (never written so) or nobody's: take it on a new one.
		default:
			return LeadershipClaim{Leader: holder}, nil
		}
		grant, err := s.kv.Grant(ctx, ttl)
		if err != nil {
			return LeadershipClaim{}, fmt.Errorf("%s: granting lease: %w", what, err)
		}
		keyCmp := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		if lkv != nil {
			keyCmp = clientv3.Compare(clientv3.ModRevision(key), "=", lkv.ModRevision)
		}
		// The unit and application are asserted too: a claim racing their removal (or the
		// unit going dying) is read again.
		put, err := s.kv.Txn(ctx).If(
			keyCmp,
			clientv3.Compare(clientv3.ModRevision(unitKey(uuid, unit)), "=", ukv.ModRevision),
			clientv3.Compare(clientv3.ModRevision(applicationKey(uuid, app)), "=", akv.ModRevision),
		).Then(clientv3.OpPut(key, unit, clientv3.WithLease(grant.ID))).Commit()
		if err == nil && put.Succeeded {
			if lkv != nil && lkv.Lease != 0 {
				// The key left its old lease: nothing else is attached to it.
				_, _ = s.kv.Revoke(ctx, clientv3.LeaseID(lkv.Lease))
			}
			return LeadershipClaim{Held: true, Leader: unit, TTL: grant.TTL}, nil
		}
		// Not needed after all: let it go rather than wait for it to run out.
		_, _ = s.kv.Revoke(ctx, grant.ID)
		if err != nil {
			return LeadershipClaim{}, fmt.Errorf("%s: %w", what, err)
		}
	}
	return LeadershipClaim{}, apierr.Errorf(apierr.Contention, "%s: state changing too quickly; try again soon", what)
}

// giveUpLeadership deletes unit's lease key. Revoking its lease deletes exactly the key attached
// to it: a newer claim by another unit holds another lease and is untouched.
func (s *State) giveUpLeadership(ctx context.Context, unit, key string, lkv *mvccpb.KeyValue) error {
	var err error
	if lkv.Lease != 0 {
		_, err = s.kv.Revoke(ctx, clientv3.LeaseID(lkv.Lease))
	} else {
		_, err = s.kv.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", lkv.ModRevision)).
			Then(clientv3.OpDelete(key)).Commit()
	}
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("unit %q giving up leadership: %w", unit, err)
	}
	return nil
}

// Leader returns the unit leading an application, "" when none does.
func (s *State) Leader(ctx context.Context, uuid, app string) (string, error) {
	resp, err := s.kv.Get(ctx, leaseKey(uuid, app))
	if err != nil {
		return "", fmt.Errorf("reading leader of %q: %w", app, err)
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// AgentApplication is what a unit agent reads of its application on every wake-up.
type AgentApplication struct {
	*storepb.Application
	// ConfigJSON is AgentConfigJSON: the charm's defaults overridden by the user's values.
	ConfigJSON string
	// Leader holds the lease ("" when nobody does); LeaderSettingsRevision is the store
	// revision of the last leader settings change (0 when never set).
	Leader                 string
	LeaderSettingsRevision int64
	// The model's name and configuration (update-status-hook-interval), the controller's model
	// defaults inherited.
	ModelName   string
	ModelConfig map[string]string
}

// ReadAgentApplication reads an application with its leadership in one round trip (its
// charm's options come from a cache).
func (s *State) ReadAgentApplication(ctx context.Context, uuid, name string) (*AgentApplication, error) {
	resp, err := s.kv.Txn(ctx).Then(agentApplicationOps(uuid, name)...).Commit()
	if err != nil {
		return nil, fmt.Errorf("reading application %q: %w", name, err)
	}
	return s.decodeAgentApplication(ctx, uuid, name, resp.Responses)
}

// agentApplicationOps read what decodeAgentApplication takes, in this order.
func agentApplicationOps(uuid, name string) []clientv3.Op {
	return []clientv3.Op{
		clientv3.OpGet(applicationKey(uuid, name)), clientv3.OpGet(leaseKey(uuid, name)),
		clientv3.OpGet(leaderSettingsKey(uuid, name), clientv3.WithKeysOnly()), clientv3.OpGet(modelKey(uuid)),
		clientv3.OpGet(controllerKey),
	}
}

// decodeAgentApplication makes an AgentApplication of the answers to agentApplicationOps.
func (s *State) decodeAgentApplication(ctx context.Context, uuid, name string, rs []*etcdserverpb.ResponseOp) (*AgentApplication, error) {
	kvs := rs[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", name)
	}
	out := &AgentApplication{Application: &storepb.Application{}}
	if err := proto.Unmarshal(kvs[0].Value, out.Application); err != nil {
		return nil, fmt.Errorf("decoding application %q: %w", name, err)
	}
	if kvs := rs[1].GetResponseRange().GetKvs(); len(kvs) > 0 {
		out.Leader = string(kvs[0].Value)
	}
	if kvs := rs[2].GetResponseRange().GetKvs(); len(kvs) > 0 {
		out.LeaderSettingsRevision = kvs[0].ModRevision
	}
	if kvs := rs[3].GetResponseRange().GetKvs(); len(kvs) > 0 {
		m := &storepb.Model{}
		if err := proto.Unmarshal(kvs[0].Value, m); err != nil {
			return nil, fmt.Errorf("decoding model %q: %w", uuid, err)
		}
		out.ModelName, out.ModelConfig = m.Name, m.Config
	}
	if kvs := rs[4].GetResponseRange().GetKvs(); len(kvs) > 0 {
		c := &storepb.Controller{}
		if err := proto.Unmarshal(kvs[0].Value, c); err != nil {
			return nil, fmt.Errorf("decoding controller: %w", err)
		}
		out.ModelConfig = modelconfig.Inherit(c.ModelDefaults, out.ModelConfig)
	}
	cfg, err := s.applicationCharmConfig(ctx, uuid, out.Application)
	if err != nil {
		return nil, err
	}
	if out.ConfigJSON, err = AgentConfigJSON(cfg, out.Application); err != nil {
		return nil, err
	}
	return out, nil
}

// LeaderSettings returns an application's leader settings (leader-get) and the store revision
// of their last change (0 when never set).
func (s *State) LeaderSettings(ctx context.Context, uuid, app string) (map[string]string, int64, error) {
	resp, err := s.kv.Txn(ctx).Then(
		clientv3.OpGet(applicationKey(uuid, app), clientv3.WithKeysOnly()), clientv3.OpGet(leaderSettingsKey(uuid, app)),
	).Commit()
	if err != nil {
		return nil, 0, fmt.Errorf("reading leader settings of %q: %w", app, err)
	}
	if len(resp.Responses[0].GetResponseRange().GetKvs()) == 0 {
		return nil, 0, apierr.Errorf(apierr.NotFound, "application %q not found", app)
	}
	kvs := resp.Responses[1].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return map[string]string{}, 0, nil
	}
	st := &storepb.Settings{}
	if err := unmarshal(kvs[0], st); err != nil {
		return nil, 0, err
	}
	if st.Values == nil {
		st.Values = map[string]string{}
	}
	return st.Values, kvs[0].ModRevision, nil
}

// requireLeader reads (and so asserts for the commit) the lease key of unit's application:
// the change commits only while unit still leads.
func (r *reader) requireLeader(ctx context.Context, uuid, unit, what string) (string, error) {
	app, err := names.UnitApplication(unit)
	if err != nil {
		return "", apierr.Errorf(apierr.NotValid, "%s: unit name %q not valid", what, unit)
	}
	leader, _, err := r.getRaw(ctx, leaseKey(uuid, app))
	if err != nil {
		return "", err
	}
	if leader != unit {
		// Juju's words: a lapsed lease deletes the key, so a former leader gets this too.
		return "", apierr.Errorf(apierr.PermissionDenied, "%s: prerequisites failed: %q is not leader of %q", what, unit, app)
	}
	return app, nil
}

// SetLeaderSettings merges values into unit's application's leader settings (leader-set); an
// empty value deletes its key. Only the leader may, asserted in the same transaction. Nothing
// is written when nothing changes, so followers see no leader-settings-changed.
func (s *State) SetLeaderSettings(ctx context.Context, uuid, unit string, values map[string]string) error {
	app, _ := names.UnitApplication(unit)
	what := fmt.Sprintf("failed to merge leadership settings: application %q", app)
	return s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if err := r.prefetch(ctx, leaseKey(uuid, app), leaderSettingsKey(uuid, app)); err != nil {
			return nil, err
		}
		if _, err := r.requireLeader(ctx, uuid, unit, what); err != nil {
			return nil, err
		}
		return r.mergeInto(ctx, leaderSettingsKey(uuid, app), values)
	})
}

// SetApplicationStatus sets the charm-set status of unit's application (status-set
// --application); only its leader may. The same status and message again writes nothing.
func (s *State) SetApplicationStatus(ctx context.Context, uuid, unit, value, message string) error {
	app, _ := names.UnitApplication(unit)
	what := fmt.Sprintf("cannot set status of application %q", app)
	if !status.IsCharmWorkload(status.Status(value)) {
		return apierr.Errorf(apierr.NotValid, "%s: status %q not valid (maintenance, blocked, waiting or active)", what, value)
	}
	return s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if err := r.prefetch(ctx, leaseKey(uuid, app), applicationKey(uuid, app)); err != nil {
			return nil, err
		}
		if _, err := r.requireLeader(ctx, uuid, unit, what); err != nil {
			return nil, err
		}
		a, err := r.application(ctx, uuid, app)
		if err != nil {
			return nil, err
		}
		if a.Status.GetStatus() == value && a.Status.GetMessage() == message {
			return nil, nil
		}
		a.Status = s.status(value, message)
		w := &writes{}
		w.put(applicationKey(uuid, app), a)
		return w, nil
	})
}
