package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/life"
)

// deployer runs the units one agent is responsible for, each in a directory under root: a
// machine agent deploys its principals, a principal's agent its subordinates (L-S, L-U3).
type deployer struct {
	runner *Runner
	c      *client.Client
	conf   Conf // the deploying agent's own configuration: model, API address, CA
	root   string
	// log is the deploying agent's log (nil: none); its lines are Juju's deployer's.
	log *agentLog
	// local holds the names of the unit directories under root: listed from the disk on the
	// first pass (nil until then), and kept since, as only this deployer makes and removes
	// them. A listing of root on every pass cost each unit a dozen system calls in the agent
	// host (issue 16). Passes run one at a time, on the deploying agent's goroutine.
	local map[string]bool
}

// deployerLogger is the module of the deployer's lines, as Juju names its deployer worker.
const deployerLogger = "juju.worker.deployer"

func unitDirName(unit string) string { return "unit-" + strings.ReplaceAll(unit, "/", "-") }

// unitFromDir is the unit a directory named by unitDirName is for: the last dash separates the
// number (application names may hold dashes, unit numbers do not).
func unitFromDir(name string) string {
	name = strings.TrimPrefix(name, "unit-")
	if i := strings.LastIndex(name, "-"); i >= 0 {
		return name[:i] + "/" + name[i+1:]
	}
	return name
}

func (d *deployer) dir(unit string) string { return filepath.Join(d.root, unitDirName(unit)) }

// reconcile applies the deployer's duties to the units assigned to it: run the agents of alive
// and dying units (a dying unit's agent has work to do); remove units that are not alive and
// were never deployed; recall and remove dead ones; recall local units no longer assigned.
func (d *deployer) reconcile(ctx context.Context, units []*pb.AgentUnit) error {
	if err := d.listLocal(); err != nil {
		return err
	}
	assigned := map[string]bool{}
	for _, u := range units {
		assigned[unitDirName(u.Name)] = true
		switch {
		case u.Life == string(life.Dead):
			d.recall(u.Name)
			d.log.write("INFO", deployerLogger, fmt.Sprintf("removing unit %q", u.Name))
			if err := d.c.RemoveUnit(ctx, d.conf.Model, u.Name); err != nil && !errors.Is(err, apierr.NotFound) {
				return fmt.Errorf("removing unit %q: %w", u.Name, err)
			}
		case u.Life != string(life.Alive) && !u.Deployed:
			d.log.write("INFO", deployerLogger, fmt.Sprintf("removing unit %q", u.Name))
			if err := d.c.RemoveUnit(ctx, d.conf.Model, u.Name); err != nil && !errors.Is(err, apierr.NotFound) {
				return fmt.Errorf("removing unit %q: %w", u.Name, err)
			}
		default:
			if err := d.deploy(ctx, u); err != nil {
				return err
			}
		}
	}
	for name := range d.local {
		if !assigned[name] {
			d.recallDir(filepath.Join(d.root, name))
		}
	}
	return nil
}

// listLocal reads the unit directories under root from the disk, once (local).
func (d *deployer) listLocal() error {
	if d.local != nil {
		return nil
	}
	entries, err := os.ReadDir(d.root)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	local := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "unit-") {
			local[e.Name()] = true
		}
	}
	d.local = local
	return nil
}

// recall stops a unit's agent and deletes its directory.
func (d *deployer) recall(unit string) { d.recallDir(d.dir(unit)) }

func (d *deployer) recallDir(dir string) {
	if _, err := os.Stat(dir); err == nil {
		d.log.write("INFO", deployerLogger, fmt.Sprintf("recalling unit %q", unitFromDir(filepath.Base(dir))))
	}
	d.runner.StopTree(dir)
	os.RemoveAll(dir)
	delete(d.local, filepath.Base(dir))
}

// deploy gives a unit a credential and its charm, then starts its agent (if not running).
func (d *deployer) deploy(ctx context.Context, u *pb.AgentUnit) error {
	dir := d.dir(u.Name)
	if d.runner.running(dir) {
		return nil // deployed and started: a pass reads nothing
	}
	// agent.conf is written without waiting for the disk (the sync was about 7 % of the agent
	// host's CPU in a 10,000-unit deploy, issue 16): one that a crash lost or cut short does
	// not read, and the unit is deployed again, with a new password.
	if conf, err := ReadConf(dir); err != nil || conf.Password == "" {
		d.log.write("INFO", deployerLogger, fmt.Sprintf("deploying unit %q", u.Name))
		password, err := state.NewPassword()
		if err != nil {
			return err
		}
		if err := d.c.SetUnitPassword(ctx, d.conf.Model, u.Name, password); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		archive, err := d.runner.charms.get(ctx, d.c, d.conf.Model, u.CharmUrl)
		if err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		// The unit's directory first, so that the charm is born in a directory only root and
		// the machine's uid may enter. Known as this deployer's from now, made or not: a
		// recall removes whatever of it there is.
		d.local[unitDirName(u.Name)] = true
		if err := errors.Join(prepareAgentDir(d.root, d.conf), prepareAgentDir(dir, d.conf)); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		if err := installCharm(archive, filepath.Join(dir, "charm"), d.conf); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		conf := Conf{
			Tag: "unit-" + strings.ReplaceAll(u.Name, "/", "-"), Password: password, Model: d.conf.Model,
			APIAddr: d.conf.APIAddr, CACert: d.conf.CACert, ID: u.Name, Address: d.conf.Address, Zone: d.conf.Zone,
			// The machine's uid, for its units and their subordinates alike.
			UID: d.conf.UID, GID: d.conf.GID, Charm: u.CharmUrl,
		}
		if err := WriteConfUnsynced(dir, conf); err != nil {
			return fmt.Errorf("deploying unit %q: %w", u.Name, err)
		}
		d.log.write("INFO", deployerLogger, fmt.Sprintf("starting unit agent %q", conf.Tag))
	}
	if err := d.runner.StartUnitAgent(dir); err != nil {
		// Near the limit of open files, say so where the machine's operator reads: the
		// deployer tries again when the agent restarts.
		d.log.write("ERROR", deployerLogger, fmt.Sprintf("cannot start unit agent of %q: %v", u.Name, err))
		return fmt.Errorf("deploying unit %q: %w", u.Name, err)
	}
	return nil
}
