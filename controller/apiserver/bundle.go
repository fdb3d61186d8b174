package apiserver

import (
	"context"
	"maps"
	"slices"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
)

// bundleServer serves BundleService: the model as bundles see it, and annotations.
type bundleServer struct {
	pb.UnimplementedBundleServiceServer
	*service
}

// DescribeModel reads the whole model at one store revision (one snapshot and its resources at
// that revision, never a query per entity) and returns it as a bundle sees it.
func (s *bundleServer) DescribeModel(ctx context.Context, req *pb.DescribeModelRequest) (*pb.ModelDescription, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	snap, err := s.st.BundleSnapshot(ctx, m.Uuid)
	if err != nil {
		return nil, err
	}
	// The controller's model defaults are controller-wide, not the model's: the default base a
	// model inherits from them is read beside the snapshot.
	defaults, err := s.st.ModelDefaults(ctx)
	if err != nil {
		return nil, err
	}
	return describeModel(snap, defaults), nil
}

// describeModel turns one snapshot into the model's description; defaults are the controller's
// model defaults, which the model's default base inherits.
func describeModel(snap *state.BundleSnapshot, defaults map[string]string) *pb.ModelDescription {
	config := modelconfig.Inherit(defaults, snap.Model.Config)
	out := &pb.ModelDescription{
		Name: snap.Model.Name, DefaultBase: displayBase(config[modelconfig.DefaultBase]), Revision: snap.Revision,
	}
	apps := map[string]*pb.DescribedApplication{}
	for _, a := range snap.Applications {
		da := &pb.DescribedApplication{
			Name: a.Name, CharmUrl: a.CharmUrl, Base: displayBase(a.Base), Subordinate: a.Subordinate,
			Life: a.Life, Constraints: a.Constraints, ConfigJson: a.Config, Trust: a.Trust,
			Exposed: a.Exposed, ExposedEndpoints: exposedEndpoints(a.ExposedEndpoints), Annotations: a.Annotations,
		}
		ch, ok := snap.Charms[a.CharmUrl]
		if ok {
			da.CharmName, da.CharmRevision, da.CharmSha256 = ch.Name, ch.Revision, ch.ArchiveSha256
		}
		current := snap.Resources[a.Name]
		var declared map[string]charm.Resource
		if len(current) > 0 && ok {
			// The metadata says each resource's type, filename and description.
			if meta, err := state.CharmMeta(ch); err == nil {
				declared = meta.Resources
			}
		}
		for _, name := range slices.Sorted(maps.Keys(current)) {
			res, ok := declared[name]
			if !ok {
				res = charm.Resource{Name: name, Type: charm.ResourceFile}
			}
			da.Resources = append(da.Resources, resourceProto(a.Name, state.Resource{Meta: res, Rev: current[name]}))
		}
		apps[a.Name] = da
		out.Applications = append(out.Applications, da)
	}
	for _, u := range snap.Units {
		da, ok := apps[u.Application]
		if !ok {
			continue
		}
		du := &pb.DescribedUnit{Name: u.Name, Life: u.Life}
		if u.Principal == "" {
			du.Machine = u.MachineId
		}
		da.Units = append(da.Units, du)
	}
	for _, da := range out.Applications {
		slices.SortFunc(da.Units, func(a, b *pb.DescribedUnit) int { return names.NaturalCompare(a.Name, b.Name) })
	}
	for _, m := range snap.Machines {
		out.Machines = append(out.Machines, &pb.DescribedMachine{
			Id: m.Id, Base: displayBase(m.Base), Constraints: m.Constraints, Annotations: m.Annotations, Life: m.Life,
		})
	}
	slices.SortFunc(out.Machines, func(a, b *pb.DescribedMachine) int { return names.NaturalCompare(a.Id, b.Id) })
	for _, r := range snap.Relations {
		out.Relations = append(out.Relations, describeRelation(r))
	}
	slices.SortFunc(out.Relations, func(a, b *pb.DescribedRelation) int {
		return slices.Compare(a.Endpoints, b.Endpoints)
	})
	return out
}

func describeRelation(r *storepb.Relation) *pb.DescribedRelation {
	dr := &pb.DescribedRelation{Life: r.Life}
	for _, ep := range r.Endpoints {
		dr.Endpoints = append(dr.Endpoints, ep.Application+":"+ep.Name)
		dr.Interface = ep.Interface
	}
	slices.Sort(dr.Endpoints)
	return dr
}

// displayBase writes a stored base as bundles do ("ubuntu@22.04", a risk only when not
// stable); what does not parse is passed on as stored.
func displayBase(s string) string {
	if s == "" {
		return ""
	}
	b, err := base.Parse(s)
	if err != nil {
		return s
	}
	return b.DisplayString()
}

// SetAnnotations sets annotations of one application or one machine; state checks the keys
// and writes them in one transaction.
func (s *bundleServer) SetAnnotations(ctx context.Context, req *pb.SetAnnotationsRequest) (*pb.SetAnnotationsResponse, error) {
	switch {
	case req.Application != "" && req.Machine != "":
		return nil, apierr.Errorf(apierr.NotValid, "annotations are set on an application or a machine, not both")
	case req.Application == "" && req.Machine == "":
		return nil, apierr.Errorf(apierr.NotValid, "no application or machine given")
	case req.Application != "" && !names.IsValidApplication(req.Application):
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	case req.Machine != "" && !names.IsValidMachine(req.Machine):
		return nil, apierr.Errorf(apierr.NotValid, "machine id %q not valid", req.Machine)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	target := state.AnnotationTarget{Application: req.Application, Machine: req.Machine}
	if err := s.st.SetAnnotations(ctx, m.Uuid, target, req.Annotations); err != nil {
		return nil, err
	}
	return &pb.SetAnnotationsResponse{}, nil
}
