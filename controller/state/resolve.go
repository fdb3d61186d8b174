package state

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// What `juju resolved` asks of a unit in error (Unit.resolved), until its agent acts on it.
const (
	ResolvedRetry   = "retry"
	ResolvedNoRetry = "no-retry"
)

// hookFailedRe reads the hook out of the workload message a failed hook leaves:
// `hook failed: "install"`, `hook failed: "db-relation-changed" for mysql:db`.
var hookFailedRe = regexp.MustCompile(`^hook failed: "([^"]+)"`)

// FailedHook returns the hook named by a `hook failed: "<hook>"` status message, or "".
func FailedHook(message string) string {
	if m := hookFailedRe.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return ""
}

// InError reports whether a unit waits for `juju resolved`: a failed hook leaves its workload
// status in error (the agent itself goes back to idle, as in Juju).
func InError(u *storepb.Unit) bool {
	return u.GetWorkloadStatus().GetStatus() == string(status.Error)
}

// ResolveUnit is `juju resolved` for one unit (L-U2): the unit must be in error and not
// resolved already; its agent then re-runs the failed hook (retry) or skips it, and clears the
// mark (ClearResolved). It returns what the agent will do, e.g. `will re-run "install" hook`.
func (s *State) ResolveUnit(ctx context.Context, uuid, name string, retry bool) (string, error) {
	mode, verb := ResolvedNoRetry, "skip"
	if retry {
		mode, verb = ResolvedRetry, "re-run"
	}
	var next string
	err := s.run(ctx, fmt.Sprintf("cannot resolve unit %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		u := &storepb.Unit{}
		found, err := r.get(ctx, unitKey(uuid, name), u)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", name)
		}
		if !InError(u) {
			return nil, apierr.Errorf(apierr.NotValid, "unit %q is not in an error state", name)
		}
		if u.Resolved != "" {
			return nil, apierr.Errorf(apierr.NotValid, "unit %q is already resolved", name)
		}
		next = fmt.Sprintf("will %s the failed hook", verb)
		if hook := FailedHook(u.WorkloadStatus.GetMessage()); hook != "" {
			next = fmt.Sprintf("will %s %q hook", verb, hook)
		}
		u.Resolved = mode
		w := &writes{}
		w.put(unitKey(uuid, name), u)
		return w, nil
	})
	if err != nil {
		return "", err
	}
	return next, nil
}

// ClearResolved is the unit agent saying it acted on `juju resolved`; nothing is written when
// there is no mark.
func (s *State) ClearResolved(ctx context.Context, uuid, name string) error {
	return s.run(ctx, fmt.Sprintf("clearing resolved of unit %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		u := &storepb.Unit{}
		found, err := r.get(ctx, unitKey(uuid, name), u)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", name)
		}
		if u.Resolved == "" {
			return nil, nil
		}
		u.Resolved = ""
		w := &writes{}
		w.put(unitKey(uuid, name), u)
		return w, nil
	})
}

// UnitsInError lists the units in error (`juju resolved --all`), in natural order.
func (s *State) UnitsInError(ctx context.Context, uuid string) ([]string, error) {
	resp, err := s.kv.Get(ctx, ModelPrefix(uuid)+"units/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing units: %w", err)
	}
	var out []string
	for _, kv := range resp.Kvs {
		u := &storepb.Unit{}
		if err := unmarshal(kv, u); err != nil {
			return nil, err
		}
		if InError(u) {
			out = append(out, u.Name)
		}
	}
	slices.SortFunc(out, names.NaturalCompare)
	return out, nil
}

// RetryProvisioning makes a machine whose provisioning failed eligible for provisioning again
// (L-M5, seed 002's `juju resolved 14 --constraints ...`): it clears the error and puts the
// machine back to pending; with replace, the machine's constraints become cons (checked like
// any constraints; its units keep theirs, L-C2). The provisioner watches provisioning errors
// change and tries again.
func (s *State) RetryProvisioning(ctx context.Context, uuid, id, cons string, replace bool) error {
	var canon string
	if replace {
		var err error
		if canon, err = canonicalConstraints(cons); err != nil {
			return err
		}
	}
	return s.updateMachine(ctx, uuid, id, fmt.Sprintf("cannot retry provisioning of machine %s", id), func(m *storepb.Machine) error {
		if m.Life != string(life.Alive) {
			return apierr.Errorf(apierr.NotAlive, "machine %s is not alive", id)
		}
		if m.ProvisioningError == "" || m.InstanceId != "" {
			return apierr.Errorf(apierr.NotValid, "machine %s is not in an error state", id)
		}
		m.ProvisioningError = ""
		m.AgentStatus = s.status(string(status.Pending), "")
		m.InstanceStatus = s.status(string(status.Pending), "")
		if replace {
			m.Constraints = canon
		}
		return nil
	})
}

// MachinesWithProvisioningErrors lists the alive machines whose provisioning failed
// (`retry-provisioning --all`), in natural order.
func (s *State) MachinesWithProvisioningErrors(ctx context.Context, uuid string) ([]string, error) {
	machines, err := s.Machines(ctx, uuid)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range machines {
		if m.Life == string(life.Alive) && m.ProvisioningError != "" {
			out = append(out, m.Id)
		}
	}
	slices.SortFunc(out, names.NaturalCompare)
	return out, nil
}
