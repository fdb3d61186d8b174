package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// hookContext is what one running hook sees through the hook tools (hooktool.Context): the
// snapshot its hook was chosen from, and calls to the controller as the unit. An action (or a
// juju exec command) runs in one too, with an empty hook and its task.
type hookContext struct {
	a      *unitAgent
	hook   *hookSpec
	snap   *snapshot
	action *taskRun
}

var _ hooktool.Context = (*hookContext)(nil)

func (c *hookContext) UnitName() string  { return c.a.conf.ID }
func (c *hookContext) HookName() string  { return c.hook.Name() }
func (c *hookContext) ModelUUID() string { return c.a.conf.Model }

func (c *hookContext) PrivateAddress() string { return c.a.conf.address() }

func (c *hookContext) PublicAddress() string {
	if addr := c.snap.unit.GetPublicAddress(); addr != "" {
		return addr
	}
	return c.a.conf.address()
}

// Endpoints: the charm's endpoints, read once from its metadata (a deployed charm does not
// change).
func (c *hookContext) Endpoints() []string { return c.a.endpoints() }

func (c *hookContext) Relation() (string, string) {
	if !c.hook.relation() {
		return "", ""
	}
	return relationTag(c.hook.Endpoint, c.hook.RelationID), c.hook.RemoteUnit
}

func relationTag(endpoint string, id int64) string { return endpoint + ":" + strconv.FormatInt(id, 10) }

// relationID accepts "db:3" or "3" naming a relation the unit knows.
func (c *hookContext) relationID(ref string) (int64, error) {
	idText := ref
	if _, after, ok := strings.Cut(ref, ":"); ok {
		idText = after
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid relation id %q", ref)
	}
	c.a.mu.Lock()
	known := c.a.st.Relations[id] != nil
	c.a.mu.Unlock()
	if c.snap.relation(id) == nil && !known {
		return 0, fmt.Errorf("relation %q: %w", ref, hooktool.ErrRelationNotFound)
	}
	return id, nil
}

func (c *hookContext) RelationIDs(_ context.Context, endpoint string) ([]string, error) {
	var ids []int64
	c.a.mu.Lock()
	for _, r := range c.snap.rels {
		// Relations the unit is about to join count too: a peer relation is there from the
		// first hook (install), as in Juju.
		if r.Endpoint == endpoint && (r.InScope || r.ShouldJoin || c.a.st.Relations[r.Id] != nil) {
			ids = append(ids, r.Id)
		}
	}
	c.a.mu.Unlock()
	if c.hook.relation() && c.hook.Endpoint == endpoint && !slices.Contains(ids, c.hook.RelationID) {
		ids = append(ids, c.hook.RelationID) // a broken hook's relation may be gone already
	}
	slices.Sort(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = relationTag(endpoint, id)
	}
	return out, nil
}

func (c *hookContext) RelationUnits(ctx context.Context, ref string) ([]string, error) {
	id, err := c.relationID(ref)
	if err != nil {
		return nil, err
	}
	if c.hook.Kind == hookBroken && c.hook.RelationID == id {
		return nil, nil
	}
	snap := c.snap
	if r := snap.relation(id); r != nil && snap.passive(r.Endpoint) {
		// The agent does not read a passive relation's members on every wake-up: read them now.
		rels, err := c.a.c.UnitRelationsObserving(ctx, c.a.conf.Model, c.a.conf.ID, []string{r.Endpoint})
		if err != nil {
			return nil, err
		}
		fresh := *snap
		fresh.rels = rels
		snap = &fresh
	}
	c.a.mu.Lock()
	defer c.a.mu.Unlock()
	return c.a.st.knownUnits(id, c.hook, snap), nil
}

// RelationRemoteApp names the other side of a relation the unit knows.
func (c *hookContext) RelationRemoteApp(_ context.Context, ref string) (string, error) {
	id, err := c.relationID(ref)
	if err != nil {
		return "", err
	}
	if r := c.snap.relation(id); r != nil {
		return r.RemoteApplication, nil
	}
	c.a.mu.Lock()
	defer c.a.mu.Unlock()
	if rs := c.a.st.Relations[id]; rs != nil {
		return rs.RemoteApp, nil
	}
	return "", fmt.Errorf("relation %q: %w", ref, hooktool.ErrRelationNotFound)
}

// RelationGet reads a unit's settings, or with app an application's: unit may name the
// application or one of its units; "" means the unit's own application.
func (c *hookContext) RelationGet(ctx context.Context, ref, unit string, app bool) (map[string]string, error) {
	id, err := c.relationID(ref)
	if err != nil {
		return nil, err
	}
	if app {
		name := unit
		if name == "" {
			name, _ = names.UnitApplication(c.a.conf.ID)
		} else if a, err := names.UnitApplication(unit); err == nil {
			name = a
		}
		return c.a.c.ApplicationRelationSettings(ctx, c.a.conf.Model, c.a.conf.ID, id, name)
	}
	if unit == c.a.conf.ID {
		unit = ""
	}
	return c.a.c.RelationSettings(ctx, c.a.conf.Model, c.a.conf.ID, id, unit)
}

// RelationSet: L-R3, a departing relation's settings can be read but no longer set.
func (c *hookContext) RelationSet(ctx context.Context, ref string, app bool, values map[string]string) error {
	id, err := c.relationID(ref)
	if err != nil {
		return err
	}
	if c.hook.RelationID == id && (c.hook.Kind == hookDeparted || c.hook.Kind == hookBroken) {
		return fmt.Errorf("cannot write relation settings in the %q hook: the relation is departing", c.hook.Name())
	}
	c.a.mu.Lock()
	rs := c.a.st.Relations[id]
	broken := rs != nil && rs.Broken
	c.a.mu.Unlock()
	if broken {
		return fmt.Errorf("cannot write relation settings: relation %q is broken", ref)
	}
	if app {
		_, err = c.a.c.SetApplicationRelationSettings(ctx, c.a.conf.Model, c.a.conf.ID, id, values)
		if errors.Is(err, apierr.PermissionDenied) {
			return fmt.Errorf("cannot write application relation settings: %w", hooktool.ErrNotLeader)
		}
		return err
	}
	_, err = c.a.c.SetRelationSettings(ctx, c.a.conf.Model, c.a.conf.ID, id, values)
	if errors.Is(err, apierr.NotFound) || errors.Is(err, apierr.NotValid) {
		// The relation went (or the unit left its scope, forced) while the hook ran on its
		// snapshot: nobody is left to read the settings, and the departing hooks come next.
		c.a.log.write("WARNING", "juju.worker.uniter", fmt.Sprintf("relation-set on %s ignored: %v", ref, err))
		return nil
	}
	return err
}

func (c *hookContext) StatusSet(ctx context.Context, application bool, st, message string) error {
	info := &pb.StatusInfo{Status: st, Message: message}
	if application {
		err := c.a.c.SetApplicationStatus(ctx, c.a.conf.Model, c.a.conf.ID, info)
		if errors.Is(err, apierr.PermissionDenied) {
			return fmt.Errorf("setting application status: %w", hooktool.ErrNotLeader)
		}
		return err
	}
	if err := c.a.c.SetUnitStatus(ctx, &pb.SetUnitStatusRequest{Model: c.a.conf.Model, Id: c.a.conf.ID, WorkloadStatus: info}); err != nil {
		return err
	}
	c.a.mu.Lock()
	c.a.st.CharmStatus = true
	c.a.workload = info
	c.a.mu.Unlock()
	return nil
}

func (c *hookContext) StatusGet(ctx context.Context) (hooktool.Status, error) {
	c.a.mu.Lock()
	w := c.a.workload
	c.a.mu.Unlock()
	if w == nil {
		u, err := c.a.c.GetUnit(ctx, c.a.conf.Model, c.a.conf.ID)
		if err != nil {
			return hooktool.Status{}, err
		}
		w = u.GetWorkloadStatus()
	}
	return hooktool.Status{Status: w.GetStatus(), Message: w.GetMessage(), Data: map[string]any{}}, nil
}

// ApplicationStatus: the leader reads its application's status and its units'.
func (c *hookContext) ApplicationStatus(ctx context.Context) (hooktool.Status, map[string]hooktool.Status, error) {
	resp, err := c.a.c.ApplicationStatus(ctx, c.a.conf.Model, c.a.conf.ID)
	if errors.Is(err, apierr.PermissionDenied) {
		return hooktool.Status{}, nil, hooktool.ErrNotLeader
	}
	if err != nil {
		return hooktool.Status{}, nil, err
	}
	units := map[string]hooktool.Status{}
	for name, st := range resp.GetUnits() {
		units[name] = hooktool.Status{Status: st.GetStatus(), Message: st.GetMessage(), Data: map[string]any{}}
	}
	app := resp.GetApplication()
	return hooktool.Status{Status: app.GetStatus(), Message: app.GetMessage(), Data: map[string]any{}}, units, nil
}

func (c *hookContext) ApplicationVersionSet(ctx context.Context, version string) error {
	return c.a.c.SetApplicationVersion(ctx, c.a.conf.Model, c.a.conf.ID, version)
}

func (c *hookContext) Log(_ context.Context, level, message string) error {
	c.a.log.write(level, "unit."+c.a.conf.ID+".juju-log", message)
	return nil
}

func (c *hookContext) Config(context.Context) (map[string]any, error) {
	cfg := map[string]any{}
	if raw := c.snap.app.GetConfigJson(); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
			return nil, fmt.Errorf("decoding the application's config: %w", err)
		}
	}
	return cfg, nil
}

func (c *hookContext) OpenPort(ctx context.Context, port string) error {
	_, err := c.a.c.SetUnitPorts(ctx, c.a.conf.Model, c.a.conf.ID, []string{port}, nil)
	return err
}

func (c *hookContext) ClosePort(ctx context.Context, port string) error {
	_, err := c.a.c.SetUnitPorts(ctx, c.a.conf.Model, c.a.conf.ID, nil, []string{port})
	return err
}

func (c *hookContext) OpenedPorts(ctx context.Context) ([]string, error) {
	return c.a.c.SetUnitPorts(ctx, c.a.conf.Model, c.a.conf.ID, nil, nil)
}

// IsLeader is true only while the unit is sure to lead for half the lease more (30 s by
// default, Juju's promise); it asks the controller only when that is not known already
// (leadership.go).
func (c *hookContext) IsLeader(ctx context.Context) (bool, error) {
	return c.a.lead.isLeader(ctx)
}

func (c *hookContext) LeaderGet(ctx context.Context) (map[string]string, error) {
	resp, err := c.a.c.LeaderSettings(ctx, c.a.conf.Model, c.a.conf.ID)
	if err != nil {
		return nil, err
	}
	return resp.GetSettings(), nil
}

// LeaderSet checks leadership first, as Juju does, and the controller checks it again against
// the live lease in the write's transaction. The refusals are in Juju's words.
func (c *hookContext) LeaderSet(ctx context.Context, values map[string]string) error {
	const prefix = "cannot write leadership settings: cannot write settings"
	leader, err := c.a.lead.isLeader(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if !leader {
		return errors.New(prefix + ": not the leader")
	}
	if err := c.a.c.SetLeaderSettings(ctx, c.a.conf.Model, c.a.conf.ID, values); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return nil
}

func (c *hookContext) GoalState(ctx context.Context) (*hooktool.GoalState, error) {
	resp, err := c.a.c.GoalState(ctx, c.a.conf.Model, c.a.conf.ID)
	if err != nil {
		return nil, err
	}
	goal := func(g *pb.GoalStatus) hooktool.GoalStatus {
		out := hooktool.GoalStatus{Status: g.GetStatus()}
		if g.GetSince() != 0 {
			out.Since = time.Unix(0, g.GetSince()).UTC().Format(time.RFC3339)
		}
		return out
	}
	gs := &hooktool.GoalState{Units: map[string]hooktool.GoalStatus{}, Relations: map[string]map[string]hooktool.GoalStatus{}}
	for name, g := range resp.GetUnits() {
		gs.Units[name] = goal(g)
	}
	for ep, rel := range resp.GetRelations() {
		members := map[string]hooktool.GoalStatus{}
		for name, g := range rel.GetMembers() {
			members[name] = goal(g)
		}
		gs.Relations[ep] = members
	}
	return gs, nil
}

// CloudSpec asks the controller at each call, so that a juju trust (or trust --remove) made
// while the hook runs counts at once, as in Juju.
func (c *hookContext) CloudSpec(ctx context.Context) (*hooktool.CloudSpec, error) {
	spec, err := c.a.c.CloudSpec(ctx, c.a.conf.Model, c.a.conf.ID)
	if err != nil {
		return nil, err
	}
	out := &hooktool.CloudSpec{Type: spec.GetType(), Name: spec.GetName(), Region: spec.GetRegion(),
		Endpoint: spec.GetEndpoint(), IdentityEndpoint: spec.GetIdentityEndpoint(), StorageEndpoint: spec.GetStorageEndpoint(),
		CACertificates: spec.GetCaCertificates(), SkipTLSVerify: spec.GetSkipTlsVerify(), IsControllerCloud: spec.GetIsControllerCloud()}
	if cred := spec.GetCredential(); cred != nil {
		out.Credential = &hooktool.CloudCredential{AuthType: cred.GetAuthType(), Attributes: cred.GetAttrs(), Redacted: cred.GetRedacted()}
	}
	return out, nil
}

// ResourceGet answers resource-get: the path of the unit's copy of the resource, fetched from
// the controller when it is not the application's current revision (resource.go).
func (c *hookContext) ResourceGet(ctx context.Context, name string) (string, error) {
	return c.a.fetchResource(ctx, name)
}

func (c *hookContext) CharmState(ctx context.Context) (map[string]string, error) {
	return c.a.c.CharmState(ctx, c.a.conf.Model, c.a.conf.ID)
}

func (c *hookContext) SetCharmState(ctx context.Context, values map[string]string) error {
	return c.a.c.SetCharmState(ctx, c.a.conf.Model, c.a.conf.ID, values)
}

// ActionParams answers action-get.
func (c *hookContext) ActionParams() (map[string]any, error) {
	if c.action == nil {
		return nil, hooktool.ErrNotAction
	}
	return c.action.params, nil
}

// SetActionResult answers action-set: the value goes into the task's results at its key path.
func (c *hookContext) SetActionResult(keys []string, value string) error {
	if c.action == nil {
		return hooktool.ErrNotAction
	}
	c.action.set(keys, value)
	return nil
}

// FailAction answers action-fail: the task fails with message once its process ends.
func (c *hookContext) FailAction(message string) error {
	if c.action == nil {
		return hooktool.ErrNotAction
	}
	c.action.fail(message)
	return nil
}

// LogAction answers action-log: the message goes to the task's log in the store at once, so
// that `juju show-task` shows progress while the action runs.
func (c *hookContext) LogAction(ctx context.Context, message string) error {
	if c.action == nil {
		return hooktool.ErrNotAction
	}
	return c.a.c.LogTask(ctx, c.a.conf.Model, c.a.conf.ID, c.action.id, message)
}

// workloadStatus values the agent itself sets around hooks (juju-cli.md §4).
var (
	installingStatus = &pb.StatusInfo{Status: string(status.Maintenance), Message: "installing charm software"}
	stoppingStatus   = &pb.StatusInfo{Status: string(status.Maintenance), Message: "stopping charm software"}
	cleaningStatus   = &pb.StatusInfo{Status: string(status.Maintenance), Message: "cleaning up prior to charm deletion"}
)
