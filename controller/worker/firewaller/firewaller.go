// Package firewaller keeps, for every provisioned machine, the record of the ingress rules a
// firewall would have (juju expose): the ports the units on the machine opened (open-port), for
// the units of exposed applications, from the CIDRs and spaces their expose rules allow. The
// local provider has no firewall: it writes the rules to the instance's firewall.json
// (local.FirewallFile) and opens nothing.
package firewaller

import (
	"cmp"
	"context"
	"log/slog"
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

// runModel re-reads a model when an application's exposure, a unit's open ports or place, or
// a machine's instance changes; the statuses of a busy model wake nobody.
func (w *Worker) runModel(ctx context.Context, uuid string) {
	watches := []modelloop.Watch{}
	for kind, keep := range map[string]func(*clientv3.Event) bool{
		state.KindApplication: changed(func() *storepb.Application { return &storepb.Application{} }, func(a, b *storepb.Application) bool {
			return a.Exposed == b.Exposed && slices.EqualFunc(a.ExposedEndpoints, b.ExposedEndpoints, func(x, y *storepb.ExposedEndpointDoc) bool { return proto.Equal(x, y) })
		}),
		state.KindUnit: changed(func() *storepb.Unit { return &storepb.Unit{} }, func(a, b *storepb.Unit) bool {
			return slices.Equal(a.OpenPorts, b.OpenPorts) && a.MachineId == b.MachineId && a.Principal == b.Principal
		}),
		state.KindMachine: changed(func() *storepb.Machine { return &storepb.Machine{} }, func(a, b *storepb.Machine) bool {
			return a.InstanceId == b.InstanceId
		}),
	} {
		prefix, err := state.KeyPrefix(uuid, kind, "")
		if err != nil {
			w.log.Error("firewaller: "+err.Error(), "model", uuid)
			return
		}
		watches = append(watches, modelloop.Watch{Prefix: prefix, PrevKV: true, Keep: keep})
	}
	changes, err := modelloop.WatchStore(ctx, w.st, watches...)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("firewaller: watching", "model", uuid, "err", err)
		}
		return
	}
	m := &model{Worker: w, uuid: uuid, recorded: map[string][]local.IngressRule{}}
	modelloop.Follow(ctx, changes, modelloop.RealClock, m.pass)
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

// model is one model's loop; recorded holds the rules last recorded per instance.
type model struct {
	*Worker
	uuid     string
	recorded map[string][]local.IngressRule
}

func (m *model) pass(ctx context.Context) (time.Time, error) {
	snap, err := m.st.Snapshot(ctx, m.uuid)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("firewaller: reading model", "model", m.uuid, "err", err)
		}
		return time.Time{}, err
	}
	rules := IngressRules(snap)
	var failed error
	instances := map[string]bool{}
	for _, mc := range snap.Machines {
		if mc.InstanceId == "" {
			continue
		}
		instances[mc.InstanceId] = true
		r := rules[mc.Id]
		if old, ok := m.recorded[mc.InstanceId]; ok && slices.EqualFunc(old, r, sameRule) {
			continue
		}
		if err := m.p.SetIngressRules(mc.InstanceId, mc.Id, r); err != nil {
			m.log.Error("firewaller: recording ingress rules", "model", m.uuid, "machine", mc.Id, "err", err)
			failed = err
			continue
		}
		m.recorded[mc.InstanceId] = r
	}
	for id := range m.recorded {
		if !instances[id] {
			delete(m.recorded, id) // released with its machine
		}
	}
	return time.Time{}, failed
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
