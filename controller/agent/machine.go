package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/status"
)

// machineAgent deploys the principal units assigned to its machine (L-S, machine agent).
type machineAgent struct {
	runner *Runner
	dir    string
	conf   Conf
	c      *client.Client
}

func (a *machineAgent) run(ctx context.Context) error {
	// Watch first, then read: nothing assigned in between is missed.
	changed, done, err := watchSignals(ctx, a.c, a.conf.Model,
		&pb.WatchTarget{Kind: state.KindMachineUnits, Id: a.conf.ID},
		&pb.WatchTarget{Kind: state.KindMachine, Id: a.conf.ID})
	if err != nil {
		return fmt.Errorf("machine %s: watching: %w", a.conf.ID, err)
	}
	if err := a.c.SetMachineStatus(ctx, a.conf.Model, a.conf.ID, &pb.StatusInfo{Status: string(status.Started)}); err != nil {
		return fmt.Errorf("machine %s: setting status: %w", a.conf.ID, err)
	}
	return follow(ctx, "machine "+a.conf.ID, changed, done, a.deployUnits)
}

// deployUnits starts an agent for every alive unit assigned here that has none yet.
func (a *machineAgent) deployUnits(ctx context.Context) error {
	units, err := a.c.MachineUnits(ctx, a.conf.Model, a.conf.ID)
	if err != nil {
		return fmt.Errorf("machine %s: listing units: %w", a.conf.ID, err)
	}
	for _, u := range units {
		if u.Life != string(life.Alive) {
			continue
		}
		if err := a.deploy(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

func unitDirName(unit string) string { return "unit-" + strings.ReplaceAll(unit, "/", "-") }

func (a *machineAgent) deploy(ctx context.Context, u *pb.AgentUnit) error {
	dir := filepath.Join(a.dir, "units", unitDirName(u.Name))
	if _, err := os.Stat(filepath.Join(dir, ConfFile)); err != nil {
		password, err := state.NewPassword()
		if err != nil {
			return err
		}
		if err := a.c.SetUnitPassword(ctx, a.conf.Model, u.Name, password); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		archive, err := a.c.GetCharmArchive(ctx, a.conf.Model, u.CharmUrl)
		if err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		if err := unpackCharm(archive, filepath.Join(dir, "charm")); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		conf := Conf{
			Tag: "unit-" + strings.ReplaceAll(u.Name, "/", "-"), Password: password, Model: a.conf.Model,
			APIAddr: a.conf.APIAddr, CACert: a.conf.CACert, ID: u.Name,
		}
		if err := WriteConf(dir, conf); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
	}
	return a.runner.StartUnitAgent(dir)
}
