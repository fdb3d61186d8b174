package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jujuclone/juju/api/apierr"
)

// Charm upgrades (juju refresh). The application's charm URL (AgentApplication.charm_url) is
// what the unit should run; the unit's record (uniterState.CharmURL) is what its charm
// directory holds; the unit's charm_url in the store is what its agent last reported. An
// alive, installed unit not in error upgrades between hooks: it puts the new charm in place,
// reports it (SetUnitCharm), then runs upgrade-charm and, after it, config-changed.

// upgradeSteps is nextStep's part for upgrades: the swap when the unit's charm is not its
// application's (or was swapped but not yet reported), then the upgrade-charm hook it owes.
// nil: nothing to do.
func upgradeSteps(st *uniterState, s *snapshot) *step {
	if !st.Installed {
		return nil
	}
	want, reported := s.app.GetCharmUrl(), s.unit.GetCharmUrl()
	current := st.CharmURL
	if current == "" {
		current = reported // a record from before upgrades: the store's says
	}
	if want != "" && (want != current || reported != current) {
		return &step{upgrade: want}
	}
	if st.UpgradeCharm {
		return &step{hook: &hookSpec{Kind: hookUpgradeCharm}}
	}
	return nil
}

// upgradeCharm puts the charm at url in place of the unit's (download, unpack beside, swap),
// re-reads its hooks, records it with upgrade-charm owed, and reports it to the controller.
// Each part is skipped when already done, so a crash at any point is finished by the next
// pass. A report refused because the application has moved on again is left to the next pass,
// which upgrades once more.
func (a *unitAgent) upgradeCharm(ctx context.Context, url string, snap *snapshot) error {
	a.mu.Lock()
	current := a.st.CharmURL
	a.mu.Unlock()
	if current != url {
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("upgrading charm to %q", url))
		archive, err := a.c.GetCharmArchive(ctx, a.conf.Model, url)
		if err != nil {
			return fmt.Errorf("unit %s: downloading charm %q: %w", a.conf.ID, url, err)
		}
		// The charm in place, to tell its files from those it wrote (kept across the upgrade).
		inPlace := current
		if inPlace == "" {
			inPlace = snap.unit.CharmUrl
		}
		oldArchive, err := a.c.GetCharmArchive(ctx, a.conf.Model, inPlace)
		if err != nil {
			return fmt.Errorf("unit %s: downloading charm %q: %w", a.conf.ID, inPlace, err)
		}
		if err := replaceCharmDir(archive, oldArchive, a.charmDir()); err != nil {
			return fmt.Errorf("unit %s: upgrading charm to %q: %w", a.conf.ID, url, err)
		}
		if err := a.readHooks(); err != nil {
			return fmt.Errorf("unit %s: %w", a.conf.ID, err)
		}
		// The endpoints are read from the new metadata when next asked for.
		a.endpointsOnce, a.endpointNames = sync.Once{}, nil
		snap.hooks = a.hooks
		if err := a.record(func(st *uniterState) { st.CharmURL, st.UpgradeCharm = url, true }); err != nil {
			return err
		}
		current = url
	}
	if snap.unit.CharmUrl != current {
		err := a.c.SetUnitCharm(ctx, a.conf.Model, a.conf.ID, current)
		switch {
		case errors.Is(err, apierr.NotValid):
			a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("charm %q is no longer the application's: %v", current, err))
		case err != nil:
			return fmt.Errorf("unit %s: reporting charm %q: %w", a.conf.ID, current, err)
		}
		snap.unit.CharmUrl = current // this pass goes on with the charm in place
	}
	return nil
}

// recordDeployedCharm starts a new unit's record with the charm its deployer unpacked.
func recordDeployedCharm(dir, url string) error {
	st, err := readUniterState(dir)
	if err != nil {
		return err
	}
	if st.CharmURL != "" {
		return nil
	}
	st.CharmURL = url
	return st.write(dir)
}
