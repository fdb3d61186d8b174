package agent

import (
	"context"
	"fmt"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/status"
)

// unitAgent runs one unit: it installs and starts the charm, then follows its unit's changes.
type unitAgent struct {
	dir  string
	conf Conf
	c    *client.Client
}

func (a *unitAgent) run(ctx context.Context) error {
	changed, done, err := watchSignals(ctx, a.c, a.conf.Model, &pb.WatchTarget{Kind: state.KindUnit, Id: a.conf.ID})
	if err != nil {
		return fmt.Errorf("unit %s: watching: %w", a.conf.ID, err)
	}
	u, err := a.c.GetUnit(ctx, a.conf.Model, a.conf.ID)
	if err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	if u.GetAgentStatus().GetStatus() == string(status.Allocating) {
		if err := a.install(ctx); err != nil {
			return err
		}
	}
	// Nothing reacts to changes of the unit yet; the watch keeps the agent connected.
	return follow(ctx, "unit "+a.conf.ID, changed, done, func(context.Context) error { return nil })
}

// install takes a freshly deployed unit to idle. The charm has no hooks to run yet, so the
// workload stays "unknown" until the charm says otherwise, as in Juju.
func (a *unitAgent) install(ctx context.Context) error {
	steps := []*pb.SetUnitStatusRequest{
		{
			AgentStatus:    &pb.StatusInfo{Status: string(status.Executing), Message: "running install hook"},
			WorkloadStatus: &pb.StatusInfo{Status: string(status.Maintenance), Message: "installing charm software"},
			PublicAddress:  "127.0.0.1",
		},
		{
			AgentStatus:    &pb.StatusInfo{Status: string(status.Idle)},
			WorkloadStatus: &pb.StatusInfo{Status: string(status.Unknown)},
		},
	}
	for _, st := range steps {
		st.Model, st.Id = a.conf.Model, a.conf.ID
		if err := a.c.SetUnitStatus(ctx, st); err != nil {
			return fmt.Errorf("unit %s: setting status: %w", a.conf.ID, err)
		}
	}
	return nil
}
