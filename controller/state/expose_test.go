package state_test

import (
	"context"
	"errors"
	"testing"

	"fmt"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

func exposure(t *testing.T, uuid, name string) (bool, string) {
	t.Helper()
	app, err := st.Application(context.Background(), uuid, name)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, e := range app.ExposedEndpoints {
		out += fmt.Sprintf("{%s spaces=%s cidrs=%s}", e.Endpoint, strings.Join(e.ToSpaces, ","), strings.Join(e.ToCidrs, ","))
	}
	return app.Exposed, out
}

// Juju's expose and unexpose: merge per endpoint, the default of every network, removal of
// named entries, exposed while any entry is left.
func TestExposeApplication(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	ep := func(name string, spaces, cidrs []string) *storepb.ExposedEndpointDoc {
		return &storepb.ExposedEndpointDoc{Endpoint: name, ToSpaces: spaces, ToCidrs: cidrs}
	}
	steps := []struct {
		name        string
		do          func() error
		exposed     bool
		want        string
		wantChanged bool
	}{
		{"every endpoint", func() error { return st.ExposeApplication(ctx, uuid, "wordpress", nil) },
			true, `{ spaces= cidrs=0.0.0.0/0,::/0}`, true},
		{"again: nothing written", func() error { return st.ExposeApplication(ctx, uuid, "wordpress", nil) },
			true, `{ spaces= cidrs=0.0.0.0/0,::/0}`, false},
		{"one endpoint, sorted and unique", func() error {
			return st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{
				ep("website", []string{"alpha", "alpha"}, []string{"10.0.0.0/8", "192.168.0.0/16", "10.0.0.0/8"})})
		}, true, `{ spaces= cidrs=0.0.0.0/0,::/0}{website spaces=alpha cidrs=10.0.0.0/8,192.168.0.0/16}`, true},
		{"the same endpoint again replaces its entry", func() error {
			return st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{ep("website", nil, []string{"10.1.0.0/16"})})
		}, true, `{ spaces= cidrs=0.0.0.0/0,::/0}{website spaces= cidrs=10.1.0.0/16}`, true},
		{"unexpose the every-endpoint entry", func() error { return st.UnexposeApplication(ctx, uuid, "wordpress", []string{""}) },
			true, `{website spaces= cidrs=10.1.0.0/16}`, true},
		{"unexpose the last entry", func() error { return st.UnexposeApplication(ctx, uuid, "wordpress", []string{"website"}) },
			false, ``, true},
		{"juju-info is an endpoint too", func() error {
			return st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{ep("juju-info", nil, nil), ep("db", nil, []string{"::1/128"})})
		}, true, `{db spaces= cidrs=::1/128}{juju-info spaces= cidrs=0.0.0.0/0,::/0}`, true},
		{"unexpose all", func() error { return st.UnexposeApplication(ctx, uuid, "wordpress", nil) }, false, ``, true},
		{"unexpose all again: nothing written", func() error { return st.UnexposeApplication(ctx, uuid, "wordpress", nil) }, false, ``, false},
	}
	for _, s := range steps {
		rev, _ := st.Revision(ctx)
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		after, _ := st.Revision(ctx)
		if changed := after != rev; changed != s.wantChanged {
			t.Errorf("%s: wrote %v, want %v", s.name, changed, s.wantChanged)
		}
		if exposed, got := exposure(t, uuid, "wordpress"); exposed != s.exposed || got != s.want {
			t.Errorf("%s: exposed %v %s\nwant %v %s", s.name, exposed, got, s.exposed, s.want)
		}
	}
}

// Every refusal names its reason and writes nothing.
func TestExposeRefusals(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	if err := st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{{Endpoint: "website"}}); err != nil {
		t.Fatal(err)
	}
	rev, _ := st.Revision(ctx)
	for _, tt := range []struct {
		name string
		do   func() error
		kind error
		msg  string
	}{
		{"unknown application", func() error { return st.ExposeApplication(ctx, uuid, "nope", nil) },
			apierr.NotFound, `application "nope" not found`},
		{"unknown endpoint", func() error {
			return st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{{Endpoint: "website"}, {Endpoint: "bogus"}})
		}, apierr.NotFound, `endpoint "bogus" not found`},
		{"unknown space", func() error {
			return st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{{ToSpaces: []string{"invaders"}}})
		}, apierr.NotFound, `space "invaders" not found`},
		{"bad CIDR", func() error {
			return st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{{ToCidrs: []string{"10.0.0.0/8", "10.0.0.300/8"}}})
		}, apierr.NotValid, `unable to parse "10.0.0.300/8" as a CIDR: invalid CIDR address: 10.0.0.300/8`},
		{"unexpose unknown endpoint", func() error { return st.UnexposeApplication(ctx, uuid, "wordpress", []string{"bogus"}) },
			apierr.NotFound, `endpoint "bogus" not found`},
		{"unexpose an endpoint not exposed", func() error { return st.UnexposeApplication(ctx, uuid, "wordpress", []string{"website", "db"}) },
			apierr.NotValid, `endpoint "db" is not exposed`},
		{"unexpose unknown application", func() error { return st.UnexposeApplication(ctx, uuid, "nope", nil) },
			apierr.NotFound, `application "nope" not found`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !errors.Is(err, tt.kind) || err.Error() != tt.msg {
				t.Fatalf("err = %v\nwant %s", err, tt.msg)
			}
		})
	}
	if after, _ := st.Revision(ctx); after != rev {
		t.Errorf("a refused expose wrote to the store")
	}
	// As in Juju, a subordinate application can be exposed (its units' ports are on their
	// principals' machines).
	if err := st.ExposeApplication(ctx, uuid, "logging", nil); err != nil {
		t.Errorf("subordinate: %v", err)
	}
	// A dying application's exposure stays as it is.
	addUnits(t, uuid, "wordpress", 1)
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	err := st.UnexposeApplication(ctx, uuid, "wordpress", nil)
	if !errors.Is(err, apierr.NotAlive) || err.Error() != `cannot set exposed flag for application "wordpress" to false: application is not alive` {
		t.Errorf("dying: %v", err)
	}
}
