package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jujuclone/juju/api/apierr"
)

// Charm upgrades (juju refresh). The application's charm URL and charm_modified_version
// (AgentApplication) are what the unit should run; the unit's record (uniterState.CharmURL and
// CharmModifiedVersion) is what its charm directory holds; the unit's charm_url in the store is
// what its agent last reported. An alive, installed unit not in error upgrades between hooks:
// it puts the new charm in place (or, for a version that grew with the same charm, keeps it),
// reports it (SetUnitCharm), then runs upgrade-charm and, after it, config-changed.
//
// A unit in error waits until resolved, unless the application was refreshed with
// --force-units (AgentApplication.force_charm): then, as Juju's uniter does, it puts the new
// charm in place at once and stays in error on the failed hook, which "juju resolved" (or
// automatically-retry-hooks) runs again from the new charm; no upgrade-charm hook runs for that
// upgrade (Juju: "units upgraded while in an error state will not have upgrade-charm hooks
// executed").

// charmChanged: the application's charm, or its version, is not what the unit has in place
// or last reported.
func charmChanged(st *uniterState, s *snapshot) bool {
	want, reported := s.app.GetCharmUrl(), s.unit.GetCharmUrl()
	if want == "" {
		return false
	}
	current := st.CharmURL
	if current == "" {
		current = reported // a record from before upgrades: the store's says
	}
	return want != current || reported != current || s.app.GetCharmModifiedVersion() != st.CharmModifiedVersion
}

// upgradeSteps is nextStep's part for upgrades: the upgrade when the unit's charm is not its
// application's (or was swapped but not yet reported), then the upgrade-charm hook it owes.
// nil: nothing to do.
func upgradeSteps(st *uniterState, s *snapshot) *step {
	if !st.Installed {
		return nil
	}
	if charmChanged(st, s) {
		return &step{upgrade: s.app.GetCharmUrl()}
	}
	if st.UpgradeCharm {
		return &step{hook: &hookSpec{Kind: hookUpgradeCharm}}
	}
	return nil
}

// forcedUpgrade is a unit in error's upgrade under refresh --force-units: the charm goes in
// place at once and the unit stays in error on its failed hook. Without the flag the upgrade
// waits, which the unit's log says once per charm version.
func (a *unitAgent) forcedUpgrade(ctx context.Context, snap *snapshot) error {
	a.mu.Lock()
	changed, failed := charmChanged(a.st, snap), a.st.Failed
	a.mu.Unlock()
	url := snap.app.GetCharmUrl()
	switch {
	case !changed:
		return nil
	case !snap.app.GetForceCharm():
		if target := fmt.Sprintf("%s %d", url, snap.app.GetCharmModifiedVersion()); a.waitingUpgrade != target {
			a.waitingUpgrade = target
			a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf(
				"awaiting error resolution for %q hook: the upgrade to charm %q waits (refresh --force-units upgrades at once)", failed.Name(), url))
		}
		return nil
	}
	a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("upgrading charm to %q while in error (--force-units)", url))
	return a.upgradeCharm(ctx, url, snap, true)
}

// upgradeCharm puts the charm at url in place of the unit's (download, unpack beside, swap),
// re-reads its hooks, records it with the application's charm_modified_version and, unless the
// unit is in error, upgrade-charm owed, and reports it to the controller. The same charm with a
// grown version is only recorded. Each part is skipped when already done, so a crash at any
// point is finished by the next pass. A report refused because the application has moved on
// again is left to the next pass, which upgrades once more.
func (a *unitAgent) upgradeCharm(ctx context.Context, url string, snap *snapshot, inError bool) error {
	version := snap.app.GetCharmModifiedVersion()
	a.mu.Lock()
	current, recorded := a.st.CharmURL, a.st.CharmModifiedVersion
	a.mu.Unlock()
	switch {
	case current != url:
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("upgrading charm to %q", url))
		archive, err := a.runner.charms.get(ctx, a.c, a.conf.Model, url)
		if err != nil {
			return fmt.Errorf("unit %s: downloading charm %q: %w", a.conf.ID, url, err)
		}
		// The charm in place, to tell its files from those it wrote (kept across the upgrade).
		inPlace := current
		if inPlace == "" {
			inPlace = snap.unit.CharmUrl
		}
		oldArchive, err := a.runner.charms.get(ctx, a.c, a.conf.Model, inPlace)
		if err != nil {
			return fmt.Errorf("unit %s: downloading charm %q: %w", a.conf.ID, inPlace, err)
		}
		if err := replaceCharmDir(archive, oldArchive, a.charmDir()); err != nil {
			return fmt.Errorf("unit %s: upgrading charm to %q: %w", a.conf.ID, url, err)
		}
		if err := a.readHooks(); err != nil {
			return fmt.Errorf("unit %s: %w", a.conf.ID, err)
		}
		// The endpoints and actions are read from the new metadata when next asked for.
		a.endpointsOnce, a.endpointNames = sync.Once{}, nil
		snap.hooks = a.hooks
		if err := a.record(func(st *uniterState) {
			st.CharmURL, st.CharmModifiedVersion = url, version
			st.UpgradeCharm = st.UpgradeCharm || !inError
		}); err != nil {
			return err
		}
		current = url
	case recorded != version:
		// The same charm, modified otherwise (a resource attached): upgrade-charm tells it.
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("charm %q modified (version %d)", url, version))
		if err := a.record(func(st *uniterState) {
			st.CharmModifiedVersion = version
			st.UpgradeCharm = st.UpgradeCharm || !inError
		}); err != nil {
			return err
		}
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
