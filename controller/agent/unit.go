package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// unitAddress is what units publish as private-address: every instance of the local provider
// is this host.
const unitAddress = "127.0.0.1"

// unitAgent runs one unit (L-S unit agent): it installs the charm, enters the scopes of alive
// relations and leaves dying ones, deploys and removes its subordinates, follows its
// application (or, for a subordinate, its principal relation) to dying, and when dying clears
// everything that holds the unit and sets it dead.
type unitAgent struct {
	dir  string
	conf Conf
	c    *client.Client
	subs *deployer

	// The subordinates' watch, re-armed when the set of subordinates changes.
	subNames   []string
	subCancel  context.CancelFunc
	subChanged <-chan struct{}
	subDone    <-chan error
}

func newUnitAgent(r *Runner, dir string, conf Conf, c *client.Client) *unitAgent {
	return &unitAgent{dir: dir, conf: conf, c: c,
		subs: &deployer{runner: r, c: c, conf: conf, root: filepath.Join(dir, "subordinates")}}
}

func (a *unitAgent) run(ctx context.Context) error {
	app, _ := names.UnitApplication(a.conf.ID)
	changed, done, err := watchSignals(ctx, a.c, a.conf.Model,
		&pb.WatchTarget{Kind: state.KindUnit, Id: a.conf.ID},
		&pb.WatchTarget{Kind: state.KindApplication, Id: app, LifeOnly: true},
		&pb.WatchTarget{Kind: state.KindRelation, LifeOnly: true})
	if err != nil {
		if gone(err) {
			return nil
		}
		return fmt.Errorf("unit %s: watching: %w", a.conf.ID, err)
	}
	defer a.stopSubWatch()
	for {
		err := a.handle(ctx)
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("unit %s: watch ended: %w", a.conf.ID, err)
		case err := <-a.subDone:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("unit %s: subordinates' watch ended: %w", a.conf.ID, err)
		case <-changed:
		case <-a.subChanged:
		}
	}
}

func (a *unitAgent) handle(ctx context.Context) error {
	u, err := a.c.GetUnit(ctx, a.conf.Model, a.conf.ID)
	if gone(err) {
		return errStop
	}
	if err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	if u.Life == string(life.Dead) {
		return errStop // L-U3: its deployer recalls and removes it
	}
	if u.AgentStatus.GetStatus() == string(status.Allocating) {
		if err := a.install(ctx); err != nil {
			return err
		}
	}
	if err := a.followToDying(ctx, u); err != nil {
		return err
	}
	rels, err := a.c.UnitRelations(ctx, a.conf.Model, a.conf.ID)
	if err != nil {
		return fmt.Errorf("unit %s: listing relations: %w", a.conf.ID, err)
	}
	if u.Principal != "" && u.Life == string(life.Alive) && !principalRelationAlive(u, rels) {
		// L-U5, L-R5: the last alive container relation to the principal is gone.
		return a.setDying(ctx)
	}
	inScope := 0
	for _, r := range rels {
		switch {
		case r.InScope && (r.Life != string(life.Alive) || u.Life != string(life.Alive)):
			// L-R3: departing (hooks come with the hook runner); the last one out removes
			// the relation (L-R4).
			if err := a.c.LeaveScope(ctx, a.conf.Model, a.conf.ID, r.Id); err != nil {
				return fmt.Errorf("unit %s: leaving relation %d: %w", a.conf.ID, r.Id, err)
			}
		case r.InScope:
			inScope++
		case r.ShouldJoin:
			// L-R2: settings first, then scope, in one transaction.
			_, err := a.c.EnterScope(ctx, &pb.ScopeRequest{
				Model: a.conf.Model, Unit: a.conf.ID, RelationId: r.Id,
				Settings: map[string]string{"private-address": unitAddress},
			})
			if errors.Is(err, apierr.NotAlive) || errors.Is(err, apierr.NotFound) {
				continue // the relation or the unit moved on; the watch brings us back
			}
			if err != nil {
				return fmt.Errorf("unit %s: entering relation %d: %w", a.conf.ID, r.Id, err)
			}
			inScope++
		}
	}
	if err := a.tendSubordinates(ctx, u); err != nil {
		return err
	}
	if u.Life == string(life.Dying) && inScope == 0 {
		// L-U2, L-U4: dead once out of every scope and rid of every subordinate.
		l, err := a.c.EnsureUnitDead(ctx, a.conf.Model, a.conf.ID)
		if err != nil {
			return fmt.Errorf("unit %s: %w", a.conf.ID, err)
		}
		if l == string(life.Dead) {
			return errStop
		}
	}
	return nil
}

// followToDying: L-U6, a unit follows its dying application.
func (a *unitAgent) followToDying(ctx context.Context, u *pb.AgentUnit) error {
	if u.Life != string(life.Alive) {
		return nil
	}
	app, err := a.c.GetApplication(ctx, a.conf.Model, u.Application)
	if err != nil && !errors.Is(err, apierr.NotFound) {
		return fmt.Errorf("unit %s: reading application: %w", a.conf.ID, err)
	}
	if err == nil && app.Life == string(life.Alive) {
		return nil
	}
	if err := a.setDying(ctx); err != nil {
		return err
	}
	u.Life = string(life.Dying)
	return nil
}

func (a *unitAgent) setDying(ctx context.Context) error {
	if _, err := a.c.SetUnitDying(ctx, a.conf.Model, a.conf.ID); err != nil {
		return fmt.Errorf("unit %s: setting dying: %w", a.conf.ID, err)
	}
	return nil
}

// principalRelationAlive: a subordinate lives while an alive container-scoped relation joins
// its application to its principal's.
func principalRelationAlive(u *pb.AgentUnit, rels []*pb.AgentRelation) bool {
	principalApp, _ := names.UnitApplication(u.Principal)
	for _, r := range rels {
		if r.Container && r.RemoteApplication == principalApp && r.Life == string(life.Alive) {
			return true
		}
	}
	return false
}

// tendSubordinates deploys, recalls and removes this principal's subordinates (L-S unit agent)
// and keeps a watch on their lives.
func (a *unitAgent) tendSubordinates(ctx context.Context, u *pb.AgentUnit) error {
	if !slices.Equal(a.subNames, u.Subordinates) {
		a.stopSubWatch()
		if len(u.Subordinates) > 0 {
			targets := make([]*pb.WatchTarget, 0, len(u.Subordinates))
			for _, sub := range u.Subordinates {
				targets = append(targets, &pb.WatchTarget{Kind: state.KindUnit, Id: sub, LifeOnly: true})
			}
			wctx, cancel := context.WithCancel(ctx)
			changed, done, err := watchSignals(wctx, a.c, a.conf.Model, targets...)
			if err != nil {
				cancel()
				return fmt.Errorf("unit %s: watching subordinates: %w", a.conf.ID, err)
			}
			a.subCancel, a.subChanged, a.subDone = cancel, changed, done
		}
		a.subNames = slices.Clone(u.Subordinates)
	}
	subs := make([]*pb.AgentUnit, 0, len(u.Subordinates))
	for _, name := range u.Subordinates {
		sub, err := a.c.GetUnit(ctx, a.conf.Model, name)
		if errors.Is(err, apierr.NotFound) || errors.Is(err, apierr.PermissionDenied) {
			continue
		}
		if err != nil {
			return fmt.Errorf("unit %s: reading subordinate %s: %w", a.conf.ID, name, err)
		}
		if u.Life != string(life.Alive) && sub.Life == string(life.Alive) {
			continue // L-U5 set it dying with us; its own agent takes it from here
		}
		subs = append(subs, sub)
	}
	return a.subs.reconcile(ctx, subs)
}

func (a *unitAgent) stopSubWatch() {
	if a.subCancel != nil {
		a.subCancel()
	}
	a.subCancel, a.subChanged, a.subDone, a.subNames = nil, nil, nil, nil
}

// install takes a freshly deployed unit to idle. The charm has no hooks to run yet, so the
// workload stays "unknown" until the charm says otherwise, as in Juju.
func (a *unitAgent) install(ctx context.Context) error {
	steps := []*pb.SetUnitStatusRequest{
		{
			AgentStatus:    &pb.StatusInfo{Status: string(status.Executing), Message: "running install hook"},
			WorkloadStatus: &pb.StatusInfo{Status: string(status.Maintenance), Message: "installing charm software"},
			PublicAddress:  unitAddress,
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

// gone: the entity was removed, or its credential with it.
func gone(err error) bool {
	return errors.Is(err, apierr.NotFound) || errors.Is(err, apierr.PermissionDenied) || errors.Is(err, apierr.Unauthenticated)
}
