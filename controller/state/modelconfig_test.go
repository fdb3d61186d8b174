package state_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
)

// model-config: values are stored in their canonical form, reset removes them, default-base
// moves the model's default base with it, and a refused change writes nothing.
func TestSetModelConfig(t *testing.T) {
	ctx := context.Background()
	m, err := st.AddModelWithConfig(ctx, "cfg-set", "admin", "", "localhost", "localhost", map[string]string{"default-base": "ubuntu@22.04/stable"})
	if err != nil || m.DefaultBase != "ubuntu@22.04" || m.Config["default-base"] != "ubuntu@22.04" {
		t.Fatalf("add: %v %v", m, err)
	}
	if err := st.SetModelConfig(ctx, m.Uuid, map[string]string{"automatically-retry-hooks": "T", "extra-info": "ci"}, []string{"default-base"}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Model(ctx, m.Uuid)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"automatically-retry-hooks": "true", "extra-info": "ci"}; !maps.Equal(got.Config, want) || got.DefaultBase != "" {
		t.Fatalf("config = %v, default base %q", got.Config, got.DefaultBase)
	}
	for _, bad := range []struct {
		set   map[string]string
		reset []string
	}{
		{map[string]string{"update-status-hook-interval": "soon"}, nil},
		{map[string]string{"no-such-key": "1"}, nil},
		{nil, []string{"agent-version"}},
		{map[string]string{"extra-info": "changed", "agent-version": "1.2.3"}, nil},
	} {
		if err := st.SetModelConfig(ctx, m.Uuid, bad.set, bad.reset); !errors.Is(err, apierr.NotValid) {
			t.Errorf("%v %v: %v, want NotValid", bad.set, bad.reset, err)
		}
	}
	// Valid alone, refused with what is stored: both kinds of proxy.
	if err := st.SetModelConfig(ctx, m.Uuid, map[string]string{"http-proxy": "http://p"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.SetModelConfig(ctx, m.Uuid, map[string]string{"juju-http-proxy": "http://p", "extra-info": "changed"}, nil); !errors.Is(err, apierr.NotValid) {
		t.Errorf("legacy and juju proxies: %v", err)
	}
	if got, _ := st.Model(ctx, m.Uuid); got.Config["extra-info"] != "ci" {
		t.Errorf("a refused change was written: %v", got.Config)
	}
	if err := st.SetModelConfig(ctx, "no-such-uuid", map[string]string{"extra-info": "x"}, nil); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown model: %v", err)
	}
}
