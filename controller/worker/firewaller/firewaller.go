// Package firewaller keeps, for every provisioned machine, the record of the ingress rules a
// firewall would have (juju expose): the ports the units on the machine opened (open-port), for
// the units of exposed applications, from the CIDRs and spaces their expose rules allow. The
// local provider has no firewall: it writes the rules to the instance's firewall.json
// (local.FirewallFile), once the instance has had one, and opens nothing.
package firewaller

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/modelloop"
)

// Provider records an instance's ingress rules (local.Provider).
type Provider interface {
	SetIngressRules(instanceID, machineID string, rules []local.IngressRule) error
}

// Worker follows every model's exposure and open ports.
type Worker struct {
	st  *state.State
	p   Provider
	log *slog.Logger
}

// New returns a firewaller.
func New(st *state.State, p Provider, log *slog.Logger) *Worker {
	return &Worker{st: st, p: p, log: log}
}

// Run records ingress rules until ctx ends: one loop per model, started as models appear.
func (w *Worker) Run(ctx context.Context) {
	modelloop.Run(ctx, w.st, w.log, "firewaller", w.runModel)
}

// Kinds of the changes a model's loop follows (modelloop.Change.Kind).
const (
	changedMachine     = "machine"     // by id
	changedPrincipal   = "principal"   // a principal unit, by name: its machine
	changedApplication = "application" // by name: the machines of its units
	changedModel       = "model"       // anything: a full pass
)

// runModel follows a model's changes that move ingress rules: an application's exposure, a
// unit's open ports or place, a machine's instance; the statuses of a busy model wake nobody.
// It reads the whole model once, when it starts (again after its watch fails), and then the
// machines the changes touch, never the model (issue 16).
func (w *Worker) runModel(ctx context.Context, uuid string) {
	apps, _ := state.KeyPrefix(uuid, state.KindApplication, "")
	units, _ := state.KeyPrefix(uuid, state.KindUnit, "")
	machines, _ := state.KeyPrefix(uuid, state.KindMachine, "")
	changes, err := modelloop.WatchChanges(ctx, w.st,
		modelloop.Watch{Prefix: apps, PrevKV: true, Kind: changedApplication,
			Keep: changed(func() *storepb.Application { return &storepb.Application{} }, func(a, b *storepb.Application) bool {
				return a.Exposed == b.Exposed && slices.EqualFunc(a.ExposedEndpoints, b.ExposedEndpoints, func(x, y *storepb.ExposedEndpointDoc) bool { return proto.Equal(x, y) })
			})},
		modelloop.Watch{Prefix: units, PrevKV: true, Name: unitChange,
			Keep: changed(func() *storepb.Unit { return &storepb.Unit{} }, func(a, b *storepb.Unit) bool {
				return slices.Equal(a.OpenPorts, b.OpenPorts) && a.MachineId == b.MachineId && a.Principal == b.Principal
			})},
		modelloop.Watch{Prefix: machines, PrevKV: true, Kind: changedMachine,
			Keep: changed(func() *storepb.Machine { return &storepb.Machine{} }, func(a, b *storepb.Machine) bool {
				return a.InstanceId == b.InstanceId
			})},
	)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("firewaller: watching", "model", uuid, "err", err)
		}
		return
	}
	m := &model{Worker: w, uuid: uuid, recorded: map[string][]local.IngressRule{}, instances: map[string]string{},
		full: true, retry: map[string]bool{}, pending: map[modelloop.Change]bool{}}
	modelloop.Follow(ctx, changes.C, modelloop.RealClock, func(ctx context.Context) (time.Time, error) {
		return time.Time{}, m.pass(ctx, changes.Take())
	})
}

// unitChange names the machine a unit's change touches, from the unit as written (as it was,
// when deleted): a principal's machine, or a subordinate's principal, whose machine is read.
func unitChange(ev *clientv3.Event) (modelloop.Change, bool) {
	cur, prev := &storepb.Unit{}, &storepb.Unit{}
	doc := cur
	if ev.Type == clientv3.EventTypeDelete {
		if ev.PrevKv == nil {
			return modelloop.Change{Kind: changedModel}, true
		}
		doc = prev
		if proto.Unmarshal(ev.PrevKv.Value, prev) != nil {
			return modelloop.Change{Kind: changedModel}, true
		}
	} else if proto.Unmarshal(ev.Kv.Value, cur) != nil {
		return modelloop.Change{Kind: changedModel}, true
	} else if ev.PrevKv != nil && (proto.Unmarshal(ev.PrevKv.Value, prev) != nil || prev.MachineId != cur.MachineId || prev.Principal != cur.Principal) {
		return modelloop.Change{Kind: changedModel}, true // moved: both places change
	}
	if doc.Principal != "" {
		return modelloop.Change{Kind: changedPrincipal, ID: doc.Principal}, true
	}
	return modelloop.Change{Kind: changedMachine, ID: doc.MachineId}, doc.MachineId != ""
}

// changed keeps a document created or deleted, or put with a change same does not ignore.
func changed[T proto.Message](newDoc func() T, same func(a, b T) bool) func(*clientv3.Event) bool {
	return func(ev *clientv3.Event) bool {
		if ev.Type != clientv3.EventTypePut || ev.PrevKv == nil {
			return true
		}
		prev, cur := newDoc(), newDoc()
		if proto.Unmarshal(ev.PrevKv.Value, prev) != nil || proto.Unmarshal(ev.Kv.Value, cur) != nil {
			return true // cannot tell: re-read
		}
		return !same(prev, cur)
	}
}

// model is one model's loop.
type model struct {
	*Worker
	uuid string
	// recorded: the rules last recorded per instance; instances: each machine's instance.
	recorded  map[string][]local.IngressRule
	instances map[string]string
	// full: the next pass reads the whole model (the first, or after a change it cannot
	// place); retry: machines whose rules failed to be recorded; pending: principals and
	// applications not yet turned into their machines (the read failed).
	full    bool
	retry   map[string]bool
	pending map[modelloop.Change]bool
}

// pass records the rules of the machines the changes touch (of every machine, on a full
// pass); a failure is retried on the next change or after modelloop.Follow's backoff.
func (m *model) pass(ctx context.Context, changes []modelloop.Change) error {
	ids := map[string]bool{}
	for id := range m.retry {
		ids[id] = true
	}
	for _, c := range changes {
		switch c.Kind {
		case changedMachine:
			ids[c.ID] = true
		case changedModel:
			m.full = true
		default:
			m.pending[c] = true
		}
	}
	if m.full {
		return m.fullPass(ctx)
	}
	var failed error
	for c := range m.pending {
		var machines []string
		var err error
		if c.Kind == changedApplication {
			machines, err = m.st.ApplicationMachineIDs(ctx, m.uuid, c.ID)
		} else {
			var units []*storepb.Unit
			units, err = m.st.UnitsByName(ctx, m.uuid, []string{c.ID})
			for _, u := range units {
				machines = append(machines, u.MachineId)
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("firewaller: reading "+c.Kind, "model", m.uuid, c.Kind, c.ID, "err", err)
			}
			failed = err
			continue
		}
		delete(m.pending, c)
		for _, id := range machines {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return failed
	}
	snap, err := m.machinesView(ctx, slices.Sorted(maps.Keys(ids)))
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("firewaller: reading machines", "model", m.uuid, "err", err)
		}
		for id := range ids {
			m.retry[id] = true
		}
		return err
	}
	present := map[string]bool{}
	for _, mc := range snap.Machines {
		present[mc.Id] = true
	}
	for id := range ids {
		if !present[id] {
			m.forget(id) // released with its machine
			delete(m.retry, id)
		}
	}
	if err := m.record(snap); err != nil {
		failed = err
	}
	return failed
}

// fullPass records the rules of every machine of the model.
func (m *model) fullPass(ctx context.Context) error {
	snap, err := m.st.Snapshot(ctx, m.uuid)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("firewaller: reading model", "model", m.uuid, "err", err)
		}
		return err
	}
	present := map[string]bool{}
	for _, mc := range snap.Machines {
		present[mc.Id] = true
	}
	for id := range m.instances {
		if !present[id] {
			m.forget(id)
		}
	}
	clear(m.retry)
	clear(m.pending)
	m.full = false
	return m.record(snap)
}

// machinesView reads the named machines with what their rules depend on: the units there
// (principals, and their subordinates) and those units' applications. IngressRules of it are
// those machines' rules.
func (m *model) machinesView(ctx context.Context, ids []string) (*state.Snapshot, error) {
	machines, err := m.st.MachinesByID(ctx, m.uuid, ids)
	if err != nil {
		return nil, err
	}
	snap := &state.Snapshot{Machines: machines}
	var subordinates []string
	apps := map[string]bool{}
	for _, mc := range machines {
		if mc.InstanceId == "" {
			continue
		}
		units, err := m.st.MachineUnits(ctx, m.uuid, mc.Id)
		if err != nil {
			return nil, err
		}
		for _, u := range units {
			snap.Units = append(snap.Units, u)
			subordinates = append(subordinates, u.Subordinates...)
			apps[u.Application] = true
		}
	}
	subs, err := m.st.UnitsByName(ctx, m.uuid, subordinates)
	if err != nil {
		return nil, err
	}
	for _, u := range subs {
		snap.Units = append(snap.Units, u)
		apps[u.Application] = true
	}
	if snap.Applications, err = m.st.ApplicationsByName(ctx, m.uuid, slices.Sorted(maps.Keys(apps))); err != nil {
		return nil, err
	}
	return snap, nil
}

// record records the rules of the machines of snap that have an instance, where they changed.
func (m *model) record(snap *state.Snapshot) error {
	rules := IngressRules(snap)
	var failed error
	for _, mc := range snap.Machines {
		if old := m.instances[mc.Id]; old != "" && old != mc.InstanceId {
			m.forget(mc.Id)
		}
		if mc.InstanceId == "" {
			continue
		}
		m.instances[mc.Id] = mc.InstanceId
		r := rules[mc.Id]
		if old, ok := m.recorded[mc.InstanceId]; ok && slices.EqualFunc(old, r, sameRule) {
			delete(m.retry, mc.Id)
			continue
		}
		if err := m.p.SetIngressRules(mc.InstanceId, mc.Id, r); err != nil {
			m.log.Error("firewaller: recording ingress rules", "model", m.uuid, "machine", mc.Id, "err", err)
			m.retry[mc.Id] = true
			failed = err
			continue
		}
		delete(m.retry, mc.Id)
		m.recorded[mc.InstanceId] = r
	}
	return failed
}

// forget drops what was recorded for a machine's instance.
func (m *model) forget(id string) {
	delete(m.recorded, m.instances[id])
	delete(m.instances, id)
}

func sameRule(a, b local.IngressRule) bool {
	return a.PortRange == b.PortRange && slices.Equal(a.SourceCIDRs, b.SourceCIDRs)
}

// IngressRules are, per machine id, the ingress rules a firewall would have: every port range
// open on a unit of an exposed application there (a subordinate's on its principal's machine),
// from the union of the CIDRs its application's expose rules allow, a space standing for its
// subnet. As in Juju's firewaller, ports opened for every endpoint (all of them here: open-port
// takes no endpoint) are reachable from the sources of every expose rule. Rules are sorted by
// port range; a machine without one has none.
func IngressRules(snap *state.Snapshot) map[string][]local.IngressRule {
	sources := map[string][]string{}
	for _, a := range snap.Applications {
		if !a.Exposed {
			continue
		}
		var cidrs []string
		for _, e := range a.ExposedEndpoints {
			cidrs = append(cidrs, e.ToCidrs...)
			for _, space := range e.ToSpaces {
				if space == state.DefaultSpace {
					cidrs = append(cidrs, local.SubnetCIDR)
				}
			}
		}
		slices.Sort(cidrs)
		sources[a.Name] = slices.Compact(cidrs)
	}
	machineOf := map[string]string{}
	for _, u := range snap.Units {
		if u.Principal == "" {
			machineOf[u.Name] = u.MachineId
		}
	}
	byMachine := map[string]map[string][]string{}
	for _, u := range snap.Units {
		from, exposed := sources[u.Application]
		if !exposed || len(u.OpenPorts) == 0 {
			continue
		}
		machine := u.MachineId
		if u.Principal != "" {
			machine = machineOf[u.Principal]
		}
		if machine == "" {
			continue
		}
		if byMachine[machine] == nil {
			byMachine[machine] = map[string][]string{}
		}
		for _, p := range u.OpenPorts {
			byMachine[machine][p] = append(byMachine[machine][p], from...)
		}
	}
	out := make(map[string][]local.IngressRule, len(byMachine))
	for machine, ports := range byMachine {
		rules := make([]local.IngressRule, 0, len(ports))
		for p, cidrs := range ports {
			slices.Sort(cidrs)
			rules = append(rules, local.IngressRule{PortRange: p, SourceCIDRs: slices.Compact(cidrs)})
		}
		slices.SortFunc(rules, func(a, b local.IngressRule) int { return cmp.Compare(a.PortRange, b.PortRange) })
		out[machine] = rules
	}
	return out
}
