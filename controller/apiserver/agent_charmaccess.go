package apiserver

import (
	"context"
	"slices"

	"github.com/jujuclone/juju/api/storepb"
)

// mayDownloadCharm: the admin; a unit agent, for its own charm (the one in place, or its
// application's after a refresh) and its subordinates' (which it deploys); a machine agent,
// for the charms of the units it deploys. Charms of other applications stay closed: they may
// hold what their owners did not mean to share.
func (s *agentServer) mayDownloadCharm(ctx context.Context, uuid string, e Entity, url string) error {
	if e.IsAdmin() {
		return nil
	}
	var units []*storepb.Unit
	switch e.Kind {
	case "unit":
		u, err := s.st.Unit(ctx, uuid, e.ID)
		if err != nil {
			return errDenied
		}
		units = append(units, u)
		for _, name := range u.Subordinates {
			if sub, err := s.st.Unit(ctx, uuid, name); err == nil {
				units = append(units, sub)
			}
		}
	case "machine":
		on, err := s.st.MachineUnits(ctx, uuid, e.ID)
		if err != nil {
			return errDenied
		}
		units = on
	}
	if slices.ContainsFunc(units, func(u *storepb.Unit) bool { return u.CharmUrl == url }) {
		return nil
	}
	seen := map[string]bool{}
	for _, u := range units {
		if seen[u.Application] {
			continue
		}
		seen[u.Application] = true
		if app, err := s.st.Application(ctx, uuid, u.Application); err == nil && app.CharmUrl == url {
			return nil
		}
	}
	return errDenied
}
