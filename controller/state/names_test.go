package state_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

func TestListNames(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "wordpress-two", wordpressMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	blog, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, "name: blog\nsummary: s\n", blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "blog", CharmURL: blog.Url, Base: "ubuntu@22.04"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddUnits(ctx, uuid, "wordpress", 12, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddUnits(ctx, uuid, "wordpress-two", 1, nil); err != nil {
		t.Fatal(err)
	}
	m, err := st.Model(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name      string
		model     string
		kind      state.NameKind
		prefix    string
		limit     int
		want      []string
		truncated bool
	}{
		{"applications", uuid, state.NamesApplications, "", 0, []string{"blog", "logging", "wordpress", "wordpress-two"}, false},
		{"applications by prefix, model by name", m.Name, state.NamesApplications, "word", 0, []string{"wordpress", "wordpress-two"}, false},
		{"units sorted naturally", uuid, state.NamesUnits, "wordpress/1", 0, []string{"wordpress/1", "wordpress/10", "wordpress/11"}, false},
		{"units of one application", uuid, state.NamesUnits, "wordpress/", 3, []string{"wordpress/0", "wordpress/1", "wordpress/10"}, true},
		{"units of both applications", uuid, state.NamesUnits, "wordpress-", 0, []string{"wordpress-two/0"}, false},
		{"machines", uuid, state.NamesMachines, "1", 0, []string{"1", "10", "11", "12"}, false},
		{"no match", uuid, state.NamesUnits, "mysql/", 0, []string{}, false},
		{"models", "", state.NamesModels, m.Name, 0, []string{m.Name}, false},
		{"config keys", uuid, state.NamesConfigKeys, "blog:", 0, []string{"blog:debug", "blog:motd", "blog:port", "blog:ratio", "blog:title", "blog:trust"}, false},
		{"config keys by prefix", uuid, state.NamesConfigKeys, "blog:t", 0, []string{"blog:title", "blog:trust"}, false},
		{"config keys limited", uuid, state.NamesConfigKeys, "blog:", 2, []string{"blog:debug", "blog:motd"}, true},
		{"config keys of a charm without options", uuid, state.NamesConfigKeys, "wordpress:", 0, []string{"wordpress:trust"}, false},
		{"endpoints", uuid, state.NamesEndpoints, "wordpress:", 0, []string{"wordpress:cluster", "wordpress:db", "wordpress:juju-info", "wordpress:website"}, false},
		{"endpoints by prefix", uuid, state.NamesEndpoints, "wordpress:w", 0, []string{"wordpress:website"}, false},
		{"endpoints limited", uuid, state.NamesEndpoints, "logging:", 1, []string{"logging:juju-info"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated, err := st.ListNames(ctx, tc.model, tc.kind, tc.prefix, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || truncated != tc.truncated {
				t.Errorf("got %q truncated %v, want %q truncated %v", got, truncated, tc.want, tc.truncated)
			}
		})
	}
}

func TestListNamesErrors(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	for _, tc := range []struct {
		name   string
		model  string
		kind   state.NameKind
		prefix string
		want   error
	}{
		{"unknown model", "no-such-model", state.NamesUnits, "", apierr.NotFound},
		{"no model", "", state.NamesApplications, "", apierr.NotValid},
		{"endpoint without colon", uuid, state.NamesEndpoints, "wordpress", apierr.NotValid},
		{"endpoint of unknown application", uuid, state.NamesEndpoints, "mysql:", apierr.NotFound},
		{"config key without colon", uuid, state.NamesConfigKeys, "wordpress", apierr.NotValid},
		{"config key of unknown application", uuid, state.NamesConfigKeys, "mysql:", apierr.NotFound},
		{"unknown kind", uuid, state.NameKind(42), "", apierr.NotValid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := st.ListNames(ctx, tc.model, tc.kind, tc.prefix, 0); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}
