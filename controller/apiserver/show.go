package apiserver

import (
	"context"
	"slices"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/names"
)

// ShowUnit returns a unit as status shows it, with every relation of its application: whether
// it and each related unit are in scope, and their settings.
func (s *applicationServer) ShowUnit(ctx context.Context, req *pb.ShowUnitRequest) (*pb.UnitDetail, error) {
	if !names.IsValidUnit(req.Unit) {
		return nil, apierr.Errorf(apierr.NotValid, "unit name %s not valid", req.Unit)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	// One snapshot answers everything but the settings.
	snap, err := s.st.Snapshot(ctx, m.Uuid)
	if err != nil {
		return nil, err
	}
	u, rels, ok := snap.UnitRelations(req.Unit)
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", req.Unit)
	}
	blockers := snap.Blockers()
	detail := &pb.UnitDetail{Application: u.Application, CharmUrl: u.CharmUrl}
	for _, a := range snap.Applications {
		if a.Name == u.Application {
			detail.WorkloadVersion = a.WorkloadVersion
		}
	}
	detail.Unit = unitStatus(u, snap.Leaders[u.Application] == u.Name, blockers)
	principals := map[string]string{}
	for _, u := range snap.Units {
		principals[u.Name] = u.Principal
	}
	for _, ur := range rels {
		settings, err := s.st.RelationSettings(ctx, m.Uuid, ur.Relation.Id)
		if err != nil {
			return nil, err
		}
		scope := blockers.ScopeUnits[ur.Relation.Id]
		info := &pb.RelationInfo{
			RelationId: ur.Relation.Id, Endpoint: ur.Own.Name, RelatedEndpoint: ur.Other.Name, Life: ur.Relation.Life,
			LocalUnit: &pb.RelatedUnit{Unit: req.Unit, InScope: ur.InScope, Data: settings[req.Unit]},
			// The other side's application settings sit beside its units', keyed by its name.
			ApplicationData: settings[ur.Other.Application],
		}
		delete(settings, ur.Other.Application)
		delete(settings, ur.Own.Application)
		// Related units: the other side's units that joined at some point (their settings
		// outlive their departure, L-R3); for a container-scoped relation only this unit's
		// principal or subordinate.
		var related []string
		for unit := range settings {
			related = append(related, unit)
		}
		for _, unit := range scope {
			if !slices.Contains(related, unit) {
				related = append(related, unit)
			}
		}
		slices.SortFunc(related, names.NaturalCompare)
		for _, unit := range related {
			app, _ := names.UnitApplication(unit)
			if unit == req.Unit || app != ur.Other.Application {
				continue
			}
			if ur.Own.Scope == string(charm.ScopeContainer) && principals[unit] != req.Unit && principals[req.Unit] != unit {
				continue
			}
			info.RelatedUnits = append(info.RelatedUnits, &pb.RelatedUnit{
				Unit: unit, InScope: slices.Contains(scope, unit), Data: settings[unit],
			})
		}
		detail.Relations = append(detail.Relations, info)
	}
	return detail, nil
}
