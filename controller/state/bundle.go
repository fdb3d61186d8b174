package state

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
)

// BundleSnapshot is the model as a bundle sees it: a Snapshot, with its applications' current
// resource revisions read at the snapshot's revision.
type BundleSnapshot struct {
	*Snapshot
	// Resources are the current revisions, by application and resource name.
	Resources map[string]map[string]*storepb.ResourceRevision
}

// BundleSnapshot reads a model at one revision: the snapshot's range reads, then its resources'
// current revisions at that same revision. A revision compacted away in between
// (etcd keeps an hour) is read again.
func (s *State) BundleSnapshot(ctx context.Context, uuid string) (*BundleSnapshot, error) {
	for attempt := 0; ; attempt++ {
		snap, err := s.Snapshot(ctx, uuid)
		if err != nil {
			return nil, err
		}
		resources, err := s.currentResources(ctx, uuid, snap.Revision)
		if errors.Is(err, rpctypes.ErrCompacted) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading resources of model %q: %w", uuid, err)
		}
		return &BundleSnapshot{Snapshot: snap, Resources: resources}, nil
	}
}

// Annotations are free-form key/value pairs on an application or a machine, which bundles
// carry (juju deploy of a bundle sets them, export-bundle writes them back). They live in the
// entity's own document, so they go with it and a snapshot reads them with the rest.

// AnnotationTarget names what SetAnnotations changes: one of Application and Machine.
type AnnotationTarget struct {
	Application, Machine string
}

func (t AnnotationTarget) String() string {
	if t.Application != "" {
		return fmt.Sprintf("application %q", t.Application)
	}
	return fmt.Sprintf("machine %q", t.Machine)
}

// CheckAnnotations refuses keys Juju refuses: a key may not contain "." (Juju's
// state.SetAnnotations, where keys are document field names), nor be empty.
func CheckAnnotations(values map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if k == "" {
			return apierr.Errorf(apierr.NotValid, "invalid annotation key %q: keys may not be empty", k)
		}
		if strings.Contains(k, ".") {
			return apierr.Errorf(apierr.NotValid, "invalid annotation key %q: keys may not contain \".\"", k)
		}
	}
	return nil
}

// applyAnnotations merges values into current (value "" removes the key) and says whether
// anything changed.
func applyAnnotations(current map[string]string, values map[string]string) (map[string]string, bool) {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	changed := false
	for k, v := range values {
		old, had := out[k]
		switch {
		case v == "" && had:
			delete(out, k)
			changed = true
		case v != "" && (!had || old != v):
			out[k] = v
			changed = true
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, changed
}

// SetAnnotations sets annotations of an application or a machine, whatever its life, in one
// transaction; a value "" removes the key. Bad keys are NotValid and nothing is written; an
// unknown application or machine is NotFound. Nothing is written when nothing changes: unit
// agents watch their application's document.
func (s *State) SetAnnotations(ctx context.Context, uuid string, target AnnotationTarget, values map[string]string) error {
	if (target.Application == "") == (target.Machine == "") {
		return apierr.Errorf(apierr.NotValid, "annotations are set on one application or one machine")
	}
	if err := CheckAnnotations(values); err != nil {
		return fmt.Errorf("cannot update annotations on %s: %w", target, err)
	}
	return s.run(ctx, fmt.Sprintf("cannot update annotations on %s", target), func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		w := &writes{}
		if target.Application != "" {
			app, err := r.application(ctx, uuid, target.Application)
			if err != nil {
				return nil, err
			}
			next, changed := applyAnnotations(app.Annotations, values)
			if !changed {
				return nil, nil
			}
			app.Annotations = next
			w.put(applicationKey(uuid, app.Name), app)
			return w, nil
		}
		m := &storepb.Machine{}
		ok, err := r.get(ctx, machineKey(uuid, target.Machine), m)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "machine %q not found", target.Machine)
		}
		next, changed := applyAnnotations(m.Annotations, values)
		if !changed {
			return nil, nil
		}
		m.Annotations = next
		w.put(machineKey(uuid, m.Id), m)
		return w, nil
	})
}
