package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/status"
)

// machineAgent deploys and removes the principal units assigned to its machine and takes its
// machine from dying to dead (L-S machine agent, L-M2).
type machineAgent struct {
	// slot is the agent's permit to work (workslots.go): held for each pass.
	slot *slot
	dir  string
	conf Conf
	c    *client.Client
	d    *deployer
	// life is the machine's life as last read; machineDue: the machine changed since.
	life       string
	machineDue bool
	// log is the machine's own log (machineLogFile), shipped to the model log under the
	// machine's tag so that `juju debug-log -i machine-N` shows it; open while run runs.
	log *agentLog
}

// machineLogFile is the machine agent's own log in its directory, as Juju's machine-N.log.
const machineLogFile = "machine.log"

func newMachineAgent(r *Runner, dir string, conf Conf, c *client.Client) *machineAgent {
	return &machineAgent{dir: dir, conf: conf, c: c, d: &deployer{runner: r, c: c, conf: conf, root: filepath.Join(dir, "units")},
		slot: &slot{slots: r.work}}
}

func (a *machineAgent) run(ctx context.Context) error {
	// The machine's ssh server (juju ssh) runs beside the agent, under the machine's directory,
	// so that stopping the machine's agents (StopTree) stops it too.
	a.d.runner.start(filepath.Join(a.dir, sshdDirName), newSSHServer(a.dir, a.conf, machineSSHAPI{Client: a.c, feeds: a.d.runner.keys}).run)
	log, err := openAgentLog(filepath.Join(a.dir, machineLogFile), a.conf.Tag, a.conf.Model, a.c)
	if err != nil {
		return fmt.Errorf("machine %s: %w", a.conf.ID, err)
	}
	// Stopped last (deferred first): the deployer's and the tasks' last lines are shipped.
	defer log.shipUntilStopped(ctx)()
	a.log, a.d.log = log, log
	ctx, cancel := context.WithCancel(ctx) // ends the watch and the tasks on return
	defer cancel()
	ctx = withSlot(ctx, a.slot)
	if err := a.slot.take(ctx); err != nil {
		return nil // stopping
	}
	defer a.slot.give()
	// Said once the agent may work: its first pass's lines (deploying its units) then go to
	// the controller with this one, in one call, not after a wait for a work slot.
	log.write("INFO", "juju.cmd.jujud", fmt.Sprintf("machine agent %s start", a.conf.Tag))
	// Watch first, then read: nothing assigned in between is missed. The index of units by
	// machine carries each unit's life, so this watch sees them go dying and dead. The task
	// queue comes on the same stream, told apart by kind: one stream, one goroutine.
	// The machine's own changes apart from its units': a unit's passing (dying, dead, removed:
	// three events each) needs no read of the machine.
	chans, done, err := a.d.runner.watches.watch(ctx, a.c, a.conf.Model, 3, func(kind string) int {
		switch kind {
		case state.KindTasks:
			return 2
		case state.KindMachine:
			return 1
		}
		return 0
	},
		&pb.WatchTarget{Kind: state.KindMachineUnits, Id: a.conf.ID, LifeOnly: true},
		&pb.WatchTarget{Kind: state.KindMachine, Id: a.conf.ID, LifeOnly: true},
		&pb.WatchTarget{Kind: state.KindTasks, Id: a.conf.ID})
	if err != nil {
		return fmt.Errorf("machine %s: watching: %w", a.conf.ID, err)
	}
	changed, machineChanged, tasksChanged := chans[0], chans[1], chans[2]
	if err := a.c.SetMachineStatus(ctx, a.conf.Model, a.conf.ID, &pb.StatusInfo{Status: string(status.Started)}); err != nil {
		return fmt.Errorf("machine %s: setting status: %w", a.conf.ID, err)
	}
	// juju exec commands on the machine run beside the deployer, each in its own goroutine,
	// so that a long command does not hold up its units; reading the queue fails the agent
	// as the deployer does (the runner restarts it).
	tasks, tasksWake := newMachineTasks(a)
	defer tasks.wg.Wait()
	defer cancel()
	handleDue, tasksDue := true, true
	a.machineDue = true
	for {
		if handleDue {
			// The read of the machine brings the task queue along when it changed.
			handleDue = false
			err := a.handle(ctx, tasks, tasksDue)
			tasksDue = false
			if errors.Is(err, errStop) {
				return nil
			} else if err != nil {
				return err
			}
		}
		if tasksDue {
			tasksDue = false
			if err := tasks.dispatch(ctx); err != nil {
				return fmt.Errorf("machine %s: tasks: %w", a.conf.ID, err)
			}
		}
		a.slot.give() // nothing to do until something changes
		a.log.idle()
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("machine %s: watch ended: %w", a.conf.ID, err)
		case <-changed:
			handleDue = true
		case <-machineChanged:
			handleDue, a.machineDue = true, true
		case <-tasksChanged:
			tasksDue = true
		case <-tasksWake:
			tasksDue = true
		}
		if err := a.slot.take(ctx); err != nil {
			return nil // stopping
		}
	}
}

// handle reads the machine's world (its machine when it changed, the units assigned to it, and
// with withTasks its task queue, which tasks then acts on first), deploys and recalls units
// to match, and takes a dying machine to dead once it has none.
func (a *machineAgent) handle(ctx context.Context, tasks *machineTasks, withTasks bool) error {
	w, err := a.c.MachineWorld(ctx, &pb.MachineWorldRequest{Model: a.conf.Model, Id: a.conf.ID, Machine: a.machineDue, Tasks: withTasks})
	if gone(err) {
		return errStop
	}
	if err != nil {
		return fmt.Errorf("machine %s: %w", a.conf.ID, err)
	}
	if a.machineDue {
		a.life, a.machineDue = w.GetMachine().GetLife(), false
	}
	if withTasks {
		if err := tasks.act(ctx, w.GetTasks()); err != nil {
			return fmt.Errorf("machine %s: tasks: %w", a.conf.ID, err)
		}
	}
	if err := a.d.reconcile(ctx, w.GetUnits()); err != nil {
		return fmt.Errorf("machine %s: %w", a.conf.ID, err)
	}
	switch a.life {
	case string(life.Dying):
		// L-M2: dead once no unit is assigned; until then the units' removal wakes us again.
		l, err := a.c.EnsureMachineDead(ctx, a.conf.Model, a.conf.ID)
		if err != nil {
			return fmt.Errorf("machine %s: %w", a.conf.ID, err)
		}
		if l == string(life.Dead) {
			a.log.write("INFO", "juju.worker.machiner", fmt.Sprintf("%q is now %s", a.conf.Tag, life.Dead))
			return errStop
		}
	case string(life.Dead):
		return errStop // L-M3: the agent stops for good; the provisioner releases the instance
	}
	return nil
}

// errStop ends an agent for good: its entity is dead or gone.
var errStop = errors.New("agent's entity is dead or gone")
