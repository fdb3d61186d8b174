package state

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
)

// The local provider as credential-get describes it: its machines are directories on the
// controller's host, so its cloud has no endpoint and needs no credential.
const (
	// ProviderType is the cloud type of every model ("type" in show-model).
	ProviderType = "local"
	// EmptyAuthType is Juju's auth type of a cloud that needs no credential (as the manual
	// provider's): the credential has no attributes.
	EmptyAuthType = "empty"
)

// CloudSpec is the cloud a model runs in with the credential to use it (Juju's cloud spec).
type CloudSpec struct {
	Type, Name, Region, Endpoint string
	AuthType                     string
	Attributes                   map[string]string
}

// TrustedCloudSpec returns the cloud spec of the model for a unit of application app when
// app is trusted (application config trust), else PermissionDenied with Juju's words. The
// application and the model are read together, so the answer follows the current trust.
func (s *State) TrustedCloudSpec(ctx context.Context, uuid, app string) (*CloudSpec, error) {
	resp, err := s.kv.Txn(ctx).Then(clientv3.OpGet(applicationKey(uuid, app)), clientv3.OpGet(modelKey(uuid))).Commit()
	if err != nil {
		return nil, fmt.Errorf("reading cloud spec of %q: %w", app, err)
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", app)
	}
	a := &storepb.Application{}
	if err := proto.Unmarshal(kvs[0].Value, a); err != nil {
		return nil, fmt.Errorf("decoding application %q: %w", app, err)
	}
	if !a.Trust {
		return nil, apierr.Errorf(apierr.PermissionDenied, "permission denied")
	}
	kvs = resp.Responses[1].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "model %q not found", uuid)
	}
	m := &storepb.Model{}
	if err := proto.Unmarshal(kvs[0].Value, m); err != nil {
		return nil, fmt.Errorf("decoding model %q: %w", uuid, err)
	}
	return &CloudSpec{Type: ProviderType, Name: m.Cloud, Region: m.Region, AuthType: EmptyAuthType}, nil
}
