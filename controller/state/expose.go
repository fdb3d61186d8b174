package state

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
)

// Exposure (juju expose, juju unexpose), as in Juju: an application's exposed_endpoints hold
// one entry per endpoint ("" standing for every endpoint), each saying from which spaces and
// CIDRs the ports its units open are reachable; the application is exposed (Application.exposed)
// exactly while there is an entry.

// DefaultSpace is the one network space of the local provider, named as Juju names its default.
const DefaultSpace = "alpha"

// AllNetworks are the CIDRs an endpoint exposed without spaces or CIDRs is reachable from.
var AllNetworks = []string{"0.0.0.0/0", "::/0"}

// ExposeApplication merges exposure entries into an alive application's, in one transaction:
// an endpoint exposed again has its entry replaced, the others are kept. Each entry's spaces
// and CIDRs are sorted and made unique; an entry with neither is reachable from AllNetworks.
// It refuses, writing nothing: an unknown space (NotFound, `space "x" not found`), an endpoint
// the application's charm does not have (NotFound, `endpoint "x" not found`), a CIDR that does
// not parse (NotValid). Exposing what is exposed already writes nothing.
func (s *State) ExposeApplication(ctx context.Context, uuid, name string, entries []*storepb.ExposedEndpointDoc) error {
	normal := make([]*storepb.ExposedEndpointDoc, 0, len(entries))
	for _, e := range entries {
		for _, space := range e.ToSpaces {
			if space != DefaultSpace {
				return apierr.Errorf(apierr.NotFound, "space %q not found", space)
			}
		}
		n := &storepb.ExposedEndpointDoc{Endpoint: e.Endpoint, ToSpaces: uniqueSorted(e.ToSpaces), ToCidrs: uniqueSorted(e.ToCidrs)}
		for _, c := range n.ToCidrs {
			if _, _, err := net.ParseCIDR(c); err != nil {
				return apierr.Errorf(apierr.NotValid, "unable to parse %q as a CIDR: %v", c, err)
			}
		}
		if len(n.ToSpaces)+len(n.ToCidrs) == 0 {
			n.ToCidrs = slices.Clone(AllNetworks)
		}
		normal = append(normal, n)
	}
	if len(normal) == 0 {
		normal = append(normal, &storepb.ExposedEndpointDoc{ToCidrs: slices.Clone(AllNetworks)})
	}
	return s.setExposure(ctx, uuid, name, true, func(app *storepb.Application, endpoints []string) ([]*storepb.ExposedEndpointDoc, error) {
		merged := slices.Clone(app.ExposedEndpoints)
		for _, n := range normal {
			if n.Endpoint != "" && !slices.Contains(endpoints, n.Endpoint) {
				return nil, apierr.Errorf(apierr.NotFound, "endpoint %q not found", n.Endpoint)
			}
			merged = slices.DeleteFunc(merged, func(e *storepb.ExposedEndpointDoc) bool { return e.Endpoint == n.Endpoint })
			merged = append(merged, n)
		}
		return merged, nil
	})
}

// UnexposeApplication removes the exposure of the endpoints named, or, with none, all of it;
// the application stays exposed while an entry is left. An endpoint the charm does not have
// (NotFound) or that is not exposed (NotValid, `endpoint "x" is not exposed`) is refused and
// nothing is written; unexposing an application that is not exposed writes nothing.
func (s *State) UnexposeApplication(ctx context.Context, uuid, name string, endpoints []string) error {
	return s.setExposure(ctx, uuid, name, false, func(app *storepb.Application, charmEndpoints []string) ([]*storepb.ExposedEndpointDoc, error) {
		if len(endpoints) == 0 {
			return nil, nil
		}
		left := slices.Clone(app.ExposedEndpoints)
		for _, ep := range endpoints {
			if ep != "" && !slices.Contains(charmEndpoints, ep) {
				return nil, apierr.Errorf(apierr.NotFound, "endpoint %q not found", ep)
			}
			i := slices.IndexFunc(left, func(e *storepb.ExposedEndpointDoc) bool { return e.Endpoint == ep })
			if i < 0 {
				return nil, apierr.Errorf(apierr.NotValid, "endpoint %q is not exposed", ep)
			}
			left = slices.Delete(left, i, i+1)
		}
		return left, nil
	})
}

// setExposure reads the alive application and its charm's endpoints, asks change for the new
// entries and writes them, sorted, with exposed set while any is left; nothing is written
// when nothing changes. expose only words the not-alive refusal as Juju does.
func (s *State) setExposure(ctx context.Context, uuid, name string, expose bool,
	change func(app *storepb.Application, endpoints []string) ([]*storepb.ExposedEndpointDoc, error)) error {
	what := "unexposing"
	if expose {
		what = "exposing"
	}
	return s.run(ctx, fmt.Sprintf("%s %q", what, name), func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		app, err := r.application(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		if app.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "cannot set exposed flag for application %q to %v: application is not alive", name, expose)
		}
		// A charm document never changes once stored: read without a guard.
		ch, err := s.Charm(ctx, uuid, app.CharmUrl)
		if err != nil {
			return nil, err
		}
		entries, err := change(app, s.CharmEndpoints(uuid, ch))
		if err != nil {
			return nil, err
		}
		slices.SortFunc(entries, func(a, b *storepb.ExposedEndpointDoc) int { return cmp.Compare(a.Endpoint, b.Endpoint) })
		if len(entries) == 0 {
			entries = nil
		}
		if app.Exposed == (len(entries) > 0) && exposureEqual(app.ExposedEndpoints, entries) {
			return nil, nil
		}
		app.ExposedEndpoints, app.Exposed = entries, len(entries) > 0
		w := &writes{}
		w.put(applicationKey(uuid, name), app)
		return w, nil
	})
}

func exposureEqual(a, b []*storepb.ExposedEndpointDoc) bool {
	return slices.EqualFunc(a, b, func(x, y *storepb.ExposedEndpointDoc) bool { return proto.Equal(x, y) })
}

func uniqueSorted(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}
