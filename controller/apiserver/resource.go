package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/names"
)

// resourceServer serves ResourceService: the files charms declare as resources.
type resourceServer struct {
	pb.UnimplementedResourceServiceServer
	*service
}

// UploadResource stores a resource's content as the application's next revision
// (attach-resource: its units then run upgrade-charm), or kept aside for a deploy or refresh.
func (s *resourceServer) UploadResource(ctx context.Context, req *pb.UploadResourceRequest) (*pb.UploadResourceResponse, error) {
	if !names.IsValidApplication(req.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	if req.Name == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no resource name given")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	up, err := s.st.UploadResource(ctx, m.Uuid, state.UploadResourceArgs{
		Application: req.Application, Name: req.Name, Filename: req.Filename, Content: req.Content,
		Username: entityFrom(ctx).ID, Pending: req.Pending, CharmURL: req.CharmUrl,
	})
	if err != nil {
		return nil, err
	}
	return &pb.UploadResourceResponse{PendingId: up.PendingID, Resource: resourceProto(req.Application, up.Resource)}, nil
}

// ListResources returns an application's resources, or a unit's (juju resources).
func (s *resourceServer) ListResources(ctx context.Context, req *pb.ListResourcesRequest) (*pb.ListResourcesResponse, error) {
	switch {
	case (req.Application == "") == (req.Unit == ""):
		return nil, apierr.Errorf(apierr.NotValid, "give an application or a unit")
	case req.Unit != "" && !names.IsValidUnit(req.Unit):
		return nil, apierr.Errorf(apierr.NotValid, "unit name %q not valid", req.Unit)
	case req.Application != "" && !names.IsValidApplication(req.Application):
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	res, err := s.st.ListResources(ctx, m.Uuid, req.Application, req.Unit)
	if err != nil {
		return nil, err
	}
	resp := &pb.ListResourcesResponse{}
	for _, r := range res.Resources {
		resp.Resources = append(resp.Resources, resourceProto(res.Application, r))
	}
	for _, u := range res.Units {
		ur := &pb.UnitResources{Unit: u.Unit}
		for _, r := range u.Resources {
			ur.Resources = append(ur.Resources, resourceProto(res.Application, r))
		}
		resp.Units = append(resp.Units, ur)
	}
	return resp, nil
}

// resourceProto is a resource as the API gives it: revision 0 when none was uploaded.
func resourceProto(app string, r state.Resource) *pb.Resource {
	out := &pb.Resource{
		Name: r.Meta.Name, Type: r.Meta.Type, Path: r.Meta.Filename, Description: r.Meta.Description,
		Origin: state.OriginUpload, Application: app,
	}
	if r.Rev != nil {
		out.Revision, out.Fingerprint, out.Size = r.Rev.Revision, r.Rev.Fingerprint, r.Rev.Size
		out.Username, out.Timestamp = r.Rev.Username, r.Rev.Timestamp
	}
	return out
}
