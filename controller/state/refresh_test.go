package state_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

// wordpressV2Meta: wordpress with a second peer endpoint, the same relations otherwise.
const wordpressV2Meta = `name: wordpress
summary: blog
requires:
  db: mysql
provides:
  website: http
peers:
  cluster: wordpress-peers
  ring: wordpress-ring
bases: [ubuntu@22.04, ubuntu@24.04]
`

// wordpressV2Config drops motd and makes port a string.
const wordpressV2Config = `options:
  title:
    type: string
    default: My Blog
  port:
    type: string
    default: "8080"
  debug:
    type: boolean
    default: true
`

func uploadCharm(t *testing.T, uuid, meta, config string) string {
	t.Helper()
	ch, err := st.AddCharm(context.Background(), uuid, charmZipWithConfig(t, meta, config))
	if err != nil {
		t.Fatal(err)
	}
	return ch.Url
}

// The refresh: the application's charm changes, config values of options gone (or of another
// type now) are dropped, a new peer endpoint gets its relation (L-D2), units keep their charm
// until their agents upgrade. One transaction: the audit of counts and references holds.
func TestSetApplicationCharm_LG3_LD2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	v1 := uploadCharm(t, uuid, wordpressMeta, blogConfig)
	config, err := st.DeployConfig(ctx, uuid, v1, map[string]string{"title": "News", "port": "80", "motd": "hi", "debug": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "wordpress", CharmURL: v1, Base: "ubuntu@22.04", Config: config}); err != nil {
		t.Fatal(err)
	}
	deploy(t, uuid, "mysql", mysqlMeta, "")
	if _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql")); err != nil {
		t.Fatal(err)
	}
	units := addUnits(t, uuid, "wordpress", 1)
	v2 := uploadCharm(t, uuid, wordpressV2Meta, wordpressV2Config)

	previous, err := st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: v2})
	if err != nil || previous != v1 {
		t.Fatalf("set charm: %q %v", previous, err)
	}
	audit(t, uuid)
	app, err := st.Application(ctx, uuid, "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	if app.CharmUrl != v2 {
		t.Errorf("charm url %q, want %q", app.CharmUrl, v2)
	}
	if want := map[string]string{"title": `"News"`, "debug": "true"}; !maps.Equal(app.Config, want) {
		t.Errorf("config %v, want %v", app.Config, want)
	}
	if app.RelationCount != 3 { // cluster, ring, db
		t.Errorf("relation count %d, want 3", app.RelationCount)
	}
	rels, err := st.Relations(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range rels {
		keys = append(keys, r.Key)
	}
	if !slices.Contains(keys, "wordpress:ring") {
		t.Errorf("relations %v: no peer relation wordpress:ring", keys)
	}
	u, err := st.Unit(ctx, uuid, units[0])
	if err != nil || u.CharmUrl != v1 {
		t.Errorf("unit's charm %q (%v): units keep theirs until their agent upgrades", u.GetCharmUrl(), err)
	}
	// The same charm again: nothing to do.
	rev, _ := st.Revision(ctx)
	if _, err := st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: v2}); err != nil {
		t.Fatal(err)
	}
	if after, _ := st.Revision(ctx); after != rev {
		t.Errorf("setting the same charm wrote to the store")
	}
}

// Every refusal names its reason and writes nothing: validated before the one transaction.
func TestSetApplicationCharmRefusals(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	if _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql")); err != nil {
		t.Fatal(err)
	}
	noDB := uploadCharm(t, uuid, strings.Replace(wordpressMeta, "requires:\n  db: mysql\n", "", 1), "")
	pgsql := uploadCharm(t, uuid, strings.Replace(wordpressMeta, "db: mysql", "db: pgsql", 1), "")
	providesDB := uploadCharm(t, uuid, strings.Replace(strings.Replace(wordpressMeta, "requires:\n  db: mysql\n", "", 1),
		"website: http", "website: http\n  db: mysql", 1), "")
	subordinate := uploadCharm(t, uuid, "name: wordpress\nsummary: blog\nsubordinate: true\nrequires:\n  db: mysql\n  host:\n    interface: juju-info\n    scope: container\nprovides:\n  website: http\npeers:\n  cluster: wordpress-peers\n", "")
	mysql := uploadCharm(t, uuid, mysqlMeta, "")
	good := uploadCharm(t, uuid, wordpressMeta, "")
	app, _ := st.Application(ctx, uuid, "wordpress")
	old := app.CharmUrl

	rev, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, app, url string
		kind           error
		msg            string
	}{
		{"unknown application", "nope", good, apierr.NotFound, `application "nope" not found`},
		{"unknown charm", "wordpress", "local:wordpress-99", apierr.NotFound, `charm "local:wordpress-99" not found`},
		{"other name", "wordpress", mysql, apierr.NotValid,
			`cannot upgrade application "wordpress" to charm "` + mysql + `": charm name "mysql" differs from the application's charm "wordpress"`},
		{"endpoint dropped", "wordpress", noDB, apierr.NotValid,
			`cannot upgrade application "wordpress" to charm "` + noDB + `": would break relation "wordpress:db mysql:db"`},
		{"interface changed", "wordpress", pgsql, apierr.NotValid,
			`cannot upgrade application "wordpress" to charm "` + pgsql + `": would break relation "wordpress:db mysql:db"`},
		{"role changed", "wordpress", providesDB, apierr.NotValid,
			`cannot upgrade application "wordpress" to charm "` + providesDB + `": would break relation "wordpress:db mysql:db"`},
		{"subordinacy", "wordpress", subordinate, apierr.NotValid,
			`cannot upgrade application "wordpress" to charm "` + subordinate + `": cannot change an application's subordinacy`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.SetApplicationCharm(ctx, uuid, tt.app, state.SetCharmArgs{CharmURL: tt.url})
			if !errors.Is(err, tt.kind) || err.Error() != tt.msg {
				t.Fatalf("err = %v\nwant %s", err, tt.msg)
			}
		})
	}
	if after, _ := st.Revision(ctx); after != rev {
		t.Errorf("a refused refresh wrote to the store (revision %d -> %d)", rev, after)
	}
	if app, _ := st.Application(ctx, uuid, "wordpress"); app.CharmUrl != old {
		t.Errorf("charm changed to %q", app.CharmUrl)
	}

	// L-G1: a dying application's charm stays.
	addUnits(t, uuid, "wordpress", 1)
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: good})
	if !errors.Is(err, apierr.NotAlive) || !strings.HasSuffix(err.Error(), "application is not alive") {
		t.Fatalf("dying: %v", err)
	}
}

// SetUnitCharm: a unit's agent reports the charm it runs, only its application's current one.
func TestSetUnitCharm(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	app := deploy(t, uuid, "mysql", mysqlMeta, "")
	units := addUnits(t, uuid, "mysql", 1)
	v2 := uploadCharm(t, uuid, mysqlMeta, "")
	v3 := uploadCharm(t, uuid, mysqlMeta, "")
	if _, err := st.SetApplicationCharm(ctx, uuid, "mysql", state.SetCharmArgs{CharmURL: v2}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetUnitCharm(ctx, uuid, units[0], v3); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("a charm not the application's: %v", err)
	}
	// The charm it has already: nothing to record.
	if err := st.SetUnitCharm(ctx, uuid, units[0], app.CharmUrl); err != nil {
		t.Fatalf("the charm it has: %v", err)
	}
	if err := st.SetUnitCharm(ctx, uuid, units[0], v2); err != nil {
		t.Fatal(err)
	}
	if u, _ := st.Unit(ctx, uuid, units[0]); u.CharmUrl != v2 {
		t.Errorf("unit charm %q", u.CharmUrl)
	}
	if err := st.SetUnitCharm(ctx, uuid, "mysql/9", v2); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown unit: %v", err)
	}
	audit(t, uuid)
}

// wordpressV3Config drops motd, ratio and port and adds theme.
const wordpressV3Config = `options:
  title:
    type: string
    default: My Blog
  debug:
    type: boolean
    default: false
  theme:
    type: string
    default: dark
`

// configSources is the application's config as "juju config" shows it: value and source per
// option of its charm.
func configSources(t *testing.T, uuid, name string) map[string]string {
	t.Helper()
	cfg, err := st.ApplicationConfig(context.Background(), uuid, name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range cfg.Settings {
		out[s.Option.Name] = s.ValueJSON + " " + s.Source
	}
	for _, s := range cfg.ApplicationSettings {
		out[s.Option.Name] = s.ValueJSON + " " + s.Source
	}
	return out
}

// refresh --config and --force-units: the values are checked against the new charm and set
// with the switch; options gone are dropped, options new take their defaults; every switch
// grows charm_modified_version; force_charm follows the last refresh.
func TestSetApplicationCharmConfigForceVersion(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	v1 := uploadCharm(t, uuid, wordpressMeta, blogConfig)
	config, err := st.DeployConfig(ctx, uuid, v1, map[string]string{"title": "News", "port": "80", "motd": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "wordpress", CharmURL: v1, Base: "ubuntu@22.04", Config: config}); err != nil {
		t.Fatal(err)
	}
	v3 := uploadCharm(t, uuid, wordpressMeta, wordpressV3Config)

	// Refused, writing nothing: an option only the old charm has, a value of the wrong type.
	rev, _ := st.Revision(ctx)
	for _, tt := range []struct {
		config map[string]string
		msg    string
	}{
		{map[string]string{"motd": "bye"}, `unknown option "motd"`},
		{map[string]string{"theme": "light", "debug": "maybe"}, `option "debug": expected boolean, got "maybe"`},
		{map[string]string{"trust": "perhaps"}, `option "trust": expected bool, got "perhaps"`},
	} {
		_, err := st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: v3, ForceUnits: true, Config: tt.config})
		want := `cannot upgrade application "wordpress" to charm "` + v3 + `": validating config settings: ` + tt.msg
		if !errors.Is(err, apierr.NotValid) || err.Error() != want {
			t.Errorf("config %v: %v\nwant %s", tt.config, err, want)
		}
	}
	if after, _ := st.Revision(ctx); after != rev {
		t.Fatal("a refused refresh wrote to the store")
	}

	if _, err := st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{
		CharmURL: v3, ForceUnits: true, Config: map[string]string{"debug": "true", "trust": "true"},
	}); err != nil {
		t.Fatal(err)
	}
	audit(t, uuid)
	app, _ := st.Application(ctx, uuid, "wordpress")
	if app.CharmModifiedVersion != 1 || !app.ForceCharm || !app.Trust {
		t.Errorf("after refresh: version %d, force %v, trust %v", app.CharmModifiedVersion, app.ForceCharm, app.Trust)
	}
	want := map[string]string{
		"title": `"News" user`, "debug": "true user", "theme": `"dark" default`, "trust": "true user",
	}
	if got := configSources(t, uuid, "wordpress"); !maps.Equal(got, want) {
		t.Errorf("config %v\nwant   %v", got, want)
	}
	// The next refresh without --force-units: units in error wait again.
	v4 := uploadCharm(t, uuid, wordpressMeta, wordpressV3Config)
	if _, err := st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: v4}); err != nil {
		t.Fatal(err)
	}
	app, _ = st.Application(ctx, uuid, "wordpress")
	if app.CharmModifiedVersion != 2 || app.ForceCharm || app.CharmUrl != v4 {
		t.Errorf("second refresh: version %d, force %v, charm %s", app.CharmModifiedVersion, app.ForceCharm, app.CharmUrl)
	}
	// The charm it has, forced: only the flag changes, the version stays.
	if _, err := st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: v4, ForceUnits: true}); err != nil {
		t.Fatal(err)
	}
	if app, _ = st.Application(ctx, uuid, "wordpress"); app.CharmModifiedVersion != 2 || !app.ForceCharm {
		t.Errorf("same charm forced: version %d, force %v", app.CharmModifiedVersion, app.ForceCharm)
	}

	// A refresh that would drop a used endpoint is refused whole: config and flag included.
	deploy(t, uuid, "mysql", mysqlMeta, "")
	if _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql")); err != nil {
		t.Fatal(err)
	}
	noDB := uploadCharm(t, uuid, strings.Replace(wordpressMeta, "requires:\n  db: mysql\n", "", 1), wordpressV3Config)
	rev, _ = st.Revision(ctx)
	_, err = st.SetApplicationCharm(ctx, uuid, "wordpress", state.SetCharmArgs{CharmURL: noDB, Config: map[string]string{"title": "Gone"}})
	if !errors.Is(err, apierr.NotValid) || !strings.HasSuffix(err.Error(), `would break relation "wordpress:db mysql:db"`) {
		t.Fatalf("dropped endpoint: %v", err)
	}
	if after, _ := st.Revision(ctx); after != rev {
		t.Error("a refused refresh wrote to the store")
	}
}
