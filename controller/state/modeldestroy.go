package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
)

// Destroying a model (destroy-model) is one small transaction that makes it dying (L-G4);
// everything in it then goes through the ordinary removals, one entity per transaction, driven
// by the model remover worker through DrainModel; the model itself goes once nothing is left.

// ErrControllerModel is the refusal to destroy the controller model, which holds the machine
// that manages the controller (it goes with kill-controller).
var ErrControllerModel = errors.New("the controller model cannot be destroyed")

// drainPage bounds every listing of a draining model: documents are read a page at a time
// (L-G4), never the whole model in one response.
const drainPage = 128

// destroyingKey holds, while a model is dying, the force deadline its removals get (Unix
// nanoseconds; 0 without --force). The model document has no field for it.
func destroyingKey(uuid string) string { return ModelPrefix(uuid) + "destroying" }

// ModelDocKey is the key of a model's document and ModelDestroyingKey the key of its destruction
// settings, for the model remover's watch.
func ModelDocKey(uuid string) string        { return modelKey(uuid) }
func ModelDestroyingKey(uuid string) string { return destroyingKey(uuid) }

// DestroyModelOptions tune DestroyModel.
type DestroyModelOptions struct {
	// ForceAfter, when non-zero, is the force deadline (L-F1) every removal of the model's
	// entities gets.
	ForceAfter int64
	// DryRun reports what would go and changes nothing.
	DryRun bool
}

// ModelRemoval is what destroying a model removes, or would: its applications, units and
// machines as they are now, sorted naturally.
type ModelRemoval struct {
	UUID, Name   string
	Applications []string
	Units        []string
	Machines     []string
	// Outcome is OutcomeDying when the call made the model dying, OutcomeNone when it was
	// already (L-G2: not an error; force may still be raised).
	Outcome Outcome
}

// DestroyModel is destroy-model: the model (by name or UUID) goes dying in one transaction with
// its force deadline; the model remover does the rest. The controller model is refused. A model
// already dying is not an error: its force deadline is brought forward if this call's is
// earlier (L-F1), nothing else changes.
func (s *State) DestroyModel(ctx context.Context, ref string, opts DestroyModelOptions) (ModelRemoval, error) {
	m, err := s.Model(ctx, ref)
	if err != nil {
		return ModelRemoval{}, err
	}
	if err := s.checkNotControllerModel(ctx, m); err != nil {
		return ModelRemoval{}, err
	}
	res, err := s.modelContents(ctx, m)
	if err != nil {
		return ModelRemoval{}, err
	}
	res.Outcome = OutcomeDying
	if m.Life != string(life.Alive) {
		res.Outcome = OutcomeNone
	}
	if opts.DryRun {
		return res, nil
	}
	err = s.run(ctx, fmt.Sprintf("cannot destroy model %q", m.Name), func(ctx context.Context, r *reader) (*writes, error) {
		doc := &storepb.Model{}
		found, err := r.get(ctx, modelKey(m.Uuid), doc)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, apierr.Errorf(apierr.NotFound, "model %q not found", ref)
		}
		w := &writes{}
		if doc.Life == string(life.Alive) {
			res.Outcome = OutcomeDying
			doc.Life = string(life.Dying)
			w.put(modelKey(m.Uuid), doc)
			w.putRaw(destroyingKey(m.Uuid), strconv.FormatInt(opts.ForceAfter, 10))
			return w, nil
		}
		res.Outcome = OutcomeNone
		raw, _, err := r.getRaw(ctx, destroyingKey(m.Uuid))
		if err != nil {
			return nil, err
		}
		current, _ := strconv.ParseInt(raw, 10, 64)
		if escalate(&current, opts.ForceAfter) {
			w.putRaw(destroyingKey(m.Uuid), strconv.FormatInt(current, 10))
		}
		return w, nil
	})
	if err != nil {
		return ModelRemoval{}, err
	}
	return res, nil
}

// checkNotControllerModel refuses the controller model: by name, or by its machine 0 that
// manages the model (only bootstrap gives that job, and only to machine 0).
func (s *State) checkNotControllerModel(ctx context.Context, m *storepb.Model) error {
	controller := m.Name == ControllerModelName
	if !controller {
		mc := &storepb.Machine{}
		found, err := s.getDoc(ctx, machineKey(m.Uuid, "0"), mc)
		if err != nil {
			return err
		}
		controller = found && hasJob(mc, JobManageModel)
	}
	if controller {
		return apierr.Errorf(ErrControllerModel,
			"cannot destroy model %q: it is the controller model; use juju kill-controller to destroy the controller", m.Name)
	}
	return nil
}

// modelContents lists a model's applications, units and machines (names only), for the report:
// three keys-only ranges read in one transaction, so they agree.
func (s *State) modelContents(ctx context.Context, m *storepb.Model) (ModelRemoval, error) {
	res := ModelRemoval{UUID: m.Uuid, Name: m.Name}
	lists := []*[]string{&res.Applications, &res.Units, &res.Machines}
	dirs := []string{"applications/", "units/", "machines/"}
	ops := make([]clientv3.Op, len(dirs))
	for i, dir := range dirs {
		ops[i] = clientv3.OpGet(ModelPrefix(m.Uuid)+dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	}
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return ModelRemoval{}, fmt.Errorf("listing model %q: %w", m.Name, err)
	}
	for i, dir := range dirs {
		kvs := resp.Responses[i].GetResponseRange().Kvs
		keys := make([]string, 0, len(kvs))
		for _, kv := range kvs {
			keys = append(keys, string(kv.Key)[len(ModelPrefix(m.Uuid)+dir):])
		}
		slices.SortFunc(keys, names.NaturalCompare)
		*lists[i] = keys
	}
	return res, nil
}

// Drain is what one DrainModel pass found.
type Drain struct {
	// Dying: the model is being destroyed (false: alive, nothing was done).
	Dying bool
	// Removed: the model is gone, removed by this pass or before it.
	Removed bool
	// What is left after the pass, while the model is not removed.
	Applications, Machines, Units, Relations int
}

// DrainModel is one pass of the model remover over a dying model: every step is one ordinary
// removal transaction of one entity (L-G4), and every listing is read a page at a time.
//   - Every alive application is destroyed (L-A1) with the model's force deadline; a dying one
//     gets the deadline if it is earlier than its own (L-F1).
//   - A unit on a machine that never got an instance has no agent to remove it: it is removed
//     at once (L-M5).
//   - A machine hosting no unit is destroyed (L-M1); with force, one hosting units too (the
//     force worker removes them first, L-F1). Its agent and the provisioner finish the job
//     (L-M2, L-M3).
//   - When no application, machine, unit or relation is left, the model is removed: its
//     documents, charms and name.
//
// A failed step does not stop the others; the last failure is returned, for a retry.
func (s *State) DrainModel(ctx context.Context, uuid string) (Drain, error) {
	m := &storepb.Model{}
	found, err := s.getDoc(ctx, modelKey(uuid), m)
	if err != nil {
		return Drain{}, err
	}
	if !found {
		return Drain{Removed: true}, nil
	}
	if m.Life == string(life.Alive) {
		return Drain{}, nil
	}
	d := Drain{Dying: true}
	raw, err := s.kv.Get(ctx, destroyingKey(uuid))
	if err != nil {
		return d, fmt.Errorf("reading model %q: %w", m.Name, err)
	}
	var forceAfter int64
	if len(raw.Kvs) > 0 {
		forceAfter, _ = strconv.ParseInt(string(raw.Kvs[0].Value), 10, 64)
	}
	opts := DestroyOptions{ForceAfter: forceAfter}
	var failed error
	step := func(err error) {
		// Gone meanwhile, not alive any more, or a unit assigned since the listing: the
		// change that caused it brings the next pass.
		if err != nil && !errors.Is(err, apierr.NotFound) && !errors.Is(err, apierr.HasAssignedUnits) {
			failed = err
		}
	}

	err = s.eachDoc(ctx, ModelPrefix(uuid)+"applications/", func(data []byte) error {
		app := &storepb.Application{}
		if err := decode(data, app); err != nil {
			return err
		}
		if app.Life == string(life.Alive) || needsForce(app.ForceAfter, forceAfter) {
			_, err := s.DestroyApplication(ctx, uuid, app.Name, opts)
			step(err)
		}
		return ctx.Err()
	})
	if err != nil {
		return d, err
	}

	assigned := map[string][]string{}
	err = s.eachKey(ctx, ModelPrefix(uuid)+"machineunits/", func(rest string) error {
		id, unit, _ := strings.Cut(rest, "/")
		assigned[id] = append(assigned[id], unit)
		return nil
	})
	if err != nil {
		return d, err
	}
	err = s.eachDoc(ctx, ModelPrefix(uuid)+"machines/", func(data []byte) error {
		mc := &storepb.Machine{}
		if err := decode(data, mc); err != nil {
			return err
		}
		units := assigned[mc.Id]
		if mc.InstanceId == "" && len(units) > 0 {
			// L-M5: never deployed, so no agent will ever remove them.
			units = s.removeUndeployed(ctx, uuid, units, opts, step)
		}
		switch {
		case hasJob(mc, JobManageModel):
		case mc.Life == string(life.Alive) && (len(units) == 0 || forceAfter != 0):
			_, err := s.DestroyMachine(ctx, uuid, mc.Id, opts)
			step(err)
		case mc.Life == string(life.Dying) && needsForce(mc.ForceAfter, forceAfter):
			_, err := s.DestroyMachine(ctx, uuid, mc.Id, opts)
			step(err)
		}
		return ctx.Err()
	})
	if err != nil {
		return d, err
	}

	counts := []*int{&d.Applications, &d.Machines, &d.Units, &d.Relations}
	for i, kind := range []string{"applications/", "machines/", "units/", "relations/"} {
		if *counts[i], err = s.count(ctx, ModelPrefix(uuid)+kind); err != nil {
			return d, err
		}
	}
	if d.Applications+d.Machines+d.Units+d.Relations > 0 {
		return d, failed
	}
	removed, err := s.removeEmptyModel(ctx, uuid)
	if err != nil {
		return d, err
	}
	d.Removed = removed
	return d, failed
}

// removeUndeployed removes the units of a machine without an instance (L-M5) and returns those
// still there.
func (s *State) removeUndeployed(ctx context.Context, uuid string, units []string, opts DestroyOptions, step func(error)) []string {
	var left []string
	for _, u := range units {
		res, err := s.DestroyUnit(ctx, uuid, u, opts)
		if err == nil && res.Outcome != OutcomeRemoved {
			// Already dying: RemoveUnit takes a unit that is not alive and was never deployed.
			err = s.RemoveUnit(ctx, uuid, u)
			if err == nil {
				res.Outcome = OutcomeRemoved
			}
		}
		if errors.Is(err, apierr.NotValid) {
			err = nil // deployed after all: its agents remove it
		}
		step(err)
		if res.Outcome != OutcomeRemoved && !errors.Is(err, apierr.NotFound) {
			left = append(left, u)
		}
	}
	return left
}

// needsForce reports whether an entity with deadline current must be given want (L-F1): the
// same rule as escalate.
func needsForce(current, want int64) bool {
	return want != 0 && (current == 0 || current > want)
}

// removeEmptyModel removes a dying model that holds no application, machine, unit or relation:
// first what is left of it (charms, sequences, settings, cleanups, ...) in bounded batches, then
// its document and its name in one transaction that asserts it is still dying and empty. It
// reports whether the model is gone.
func (s *State) removeEmptyModel(ctx context.Context, uuid string) (bool, error) {
	prefix := ModelPrefix(uuid)
	kept := []string{modelKey(uuid), destroyingKey(uuid)}
	guarded := []string{"applications/", "machines/", "units/", "relations/"}
	err := s.deleteInBatches(ctx, prefix, func(key string) bool {
		if slices.Contains(kept, key) {
			return true
		}
		rest := key[len(prefix):]
		return slices.ContainsFunc(guarded, func(p string) bool { return strings.HasPrefix(rest, p) })
	})
	if err != nil {
		return false, err
	}
	if err := s.deleteInBatches(ctx, charmBlobPrefix+uuid+"/", nil); err != nil {
		return false, err
	}
	if err := s.deleteInBatches(ctx, resourceBlobPrefix+uuid+"/", nil); err != nil {
		return false, err
	}
	var removed bool
	err = s.run(ctx, "cannot remove model", func(ctx context.Context, r *reader) (*writes, error) {
		removed = false
		m := &storepb.Model{}
		found, err := r.get(ctx, modelKey(uuid), m)
		if err != nil {
			return nil, err
		}
		if !found {
			removed = true
			return nil, nil
		}
		if m.Life == string(life.Alive) {
			return nil, nil
		}
		owner, _, err := r.getRaw(ctx, modelNamePrefix+m.Name)
		if err != nil {
			return nil, err
		}
		for _, p := range guarded {
			r.assertEmpty(prefix+p, clientv3.GetPrefixRangeEnd(prefix+p))
		}
		w := &writes{}
		// What is left under the prefix is the model document, its destruction key and
		// whatever slipped in since the batches: a few keys, one range each.
		w.add(prefix, clientv3.OpDelete(prefix, clientv3.WithPrefix()))
		w.add(charmBlobPrefix+uuid+"/", clientv3.OpDelete(charmBlobPrefix+uuid+"/", clientv3.WithPrefix()))
		w.deleteRange(resourceBlobPrefix + uuid + "/")
		if owner == uuid {
			w.del(modelNamePrefix + m.Name)
		}
		removed = true
		return w, nil
	})
	if err != nil {
		removed = false
	}
	return removed, err
}

// deleteInBatches deletes the keys under prefix, except those keep says to keep, at most one
// page per transaction. Nothing references them any more, so the batches need no guards.
func (s *State) deleteInBatches(ctx context.Context, prefix string, keep func(key string) bool) error {
	from, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	for {
		resp, err := s.kv.Get(ctx, from, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(drainPage))
		if err != nil {
			return fmt.Errorf("reading %s: %w", prefix, err)
		}
		var ops []clientv3.Op
		for _, kv := range resp.Kvs {
			if keep == nil || !keep(string(kv.Key)) {
				ops = append(ops, clientv3.OpDelete(string(kv.Key)))
			}
		}
		if len(ops) > 0 {
			if _, err := s.kv.Txn(ctx).Then(ops...).Commit(); err != nil {
				return fmt.Errorf("deleting under %s: %w", prefix, err)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// eachDoc calls fn with the value of every key under prefix, read a page at a time.
func (s *State) eachDoc(ctx context.Context, prefix string, fn func(data []byte) error) error {
	return s.eachPage(ctx, prefix, false, func(_ string, value []byte) error { return fn(value) })
}

// decode reads one document listed by eachDoc.
func decode(data []byte, msg proto.Message) error {
	if err := proto.Unmarshal(data, msg); err != nil {
		return fmt.Errorf("decoding %T: %w", msg, err)
	}
	return nil
}

// eachKey calls fn with every key under prefix, the prefix stripped, read a page at a time.
func (s *State) eachKey(ctx context.Context, prefix string, fn func(rest string) error) error {
	return s.eachPage(ctx, prefix, true, func(key string, _ []byte) error { return fn(key[len(prefix):]) })
}

func (s *State) eachPage(ctx context.Context, prefix string, keysOnly bool, fn func(key string, value []byte) error) error {
	from, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(drainPage)}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := s.kv.Get(ctx, from, opts...)
		if err != nil {
			return fmt.Errorf("reading %s: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			if err := fn(string(kv.Key), kv.Value); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
