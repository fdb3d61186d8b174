package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/core/status"
)

// hookContext is what one running hook sees through the hook tools (hooktool.Context): the
// snapshot its hook was chosen from, and calls to the controller as the unit.
type hookContext struct {
	a    *unitAgent
	hook *hookSpec
	snap *snapshot
}

var _ hooktool.Context = (*hookContext)(nil)

func (c *hookContext) UnitName() string { return c.a.conf.ID }
func (c *hookContext) HookName() string { return c.hook.Name() }

func (c *hookContext) PrivateAddress() string { return unitAddress }

func (c *hookContext) PublicAddress() string {
	if addr := c.snap.unit.GetPublicAddress(); addr != "" {
		return addr
	}
	return unitAddress
}

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
		return 0, fmt.Errorf("relation %q not found", ref)
	}
	return id, nil
}

func (c *hookContext) RelationIDs(_ context.Context, endpoint string) ([]string, error) {
	var ids []int64
	c.a.mu.Lock()
	for _, r := range c.snap.rels {
		if r.Endpoint == endpoint && (r.InScope || c.a.st.Relations[r.Id] != nil) {
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

func (c *hookContext) RelationGet(ctx context.Context, ref, unit string) (map[string]string, error) {
	id, err := c.relationID(ref)
	if err != nil {
		return nil, err
	}
	if unit == c.a.conf.ID {
		unit = ""
	}
	return c.a.c.RelationSettings(ctx, c.a.conf.Model, c.a.conf.ID, id, unit)
}

// RelationSet: L-R3, a departing relation's settings can be read but no longer set.
func (c *hookContext) RelationSet(ctx context.Context, ref string, values map[string]string) error {
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
		return c.a.c.SetApplicationStatus(ctx, c.a.conf.Model, c.a.conf.ID, info)
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

func (c *hookContext) StatusGet(ctx context.Context, application bool) (string, string, error) {
	if application {
		return "", "", fmt.Errorf("the application status is not readable by units")
	}
	c.a.mu.Lock()
	w := c.a.workload
	c.a.mu.Unlock()
	if w != nil {
		return w.Status, w.Message, nil
	}
	u, err := c.a.c.GetUnit(ctx, c.a.conf.Model, c.a.conf.ID)
	if err != nil {
		return "", "", err
	}
	return u.GetWorkloadStatus().GetStatus(), u.GetWorkloadStatus().GetMessage(), nil
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

// IsLeader claims (or extends) the lease, so a true answer holds for the lease's duration.
func (c *hookContext) IsLeader(ctx context.Context) (bool, error) {
	resp, err := c.a.c.ClaimLeadership(ctx, c.a.conf.Model, c.a.conf.ID, leaseSeconds)
	if err != nil {
		return false, err
	}
	return resp.Held, nil
}

func (c *hookContext) LeaderGet(ctx context.Context) (map[string]string, error) {
	resp, err := c.a.c.LeaderSettings(ctx, c.a.conf.Model, c.a.conf.ID)
	if err != nil {
		return nil, err
	}
	return resp.GetSettings(), nil
}

func (c *hookContext) LeaderSet(ctx context.Context, values map[string]string) error {
	return c.a.c.SetLeaderSettings(ctx, c.a.conf.Model, c.a.conf.ID, values)
}

// workloadStatus values the agent itself sets around hooks (juju-cli.md §4).
var (
	installingStatus = &pb.StatusInfo{Status: string(status.Maintenance), Message: "installing charm software"}
	stoppingStatus   = &pb.StatusInfo{Status: string(status.Maintenance), Message: "stopping charm software"}
	cleaningStatus   = &pb.StatusInfo{Status: string(status.Maintenance), Message: "cleaning up prior to charm deletion"}
)
