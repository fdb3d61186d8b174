package state_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

const blogConfig = `options:
  title:
    type: string
    default: My Blog
    description: Blog title.
  port:
    type: int
    default: 8080
  debug:
    type: boolean
    default: false
  ratio:
    type: float
  motd:
    type: string
`

// charmZipWithConfig is a charm archive with metadata.yaml and config.yaml.
func charmZipWithConfig(t *testing.T, meta, config string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range map[string]string{"metadata.yaml": meta, "config.yaml": config} {
		f, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCharmConfigStoredOnUpload(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.Charm(ctx, uuid, ch.Url)
	if err != nil || string(stored.Config) != blogConfig {
		t.Fatalf("stored config %q, %v", stored.GetConfig(), err)
	}
	_, err = st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, "options:\n  x:\n    type: list\n"))
	if !errors.Is(err, apierr.NotValid) || err.Error() != `charm "wordpress": invalid config.yaml: option "x" has unknown type "list"` {
		t.Fatalf("bad config.yaml: %v", err)
	}
}

func TestDeployAndSetConfig(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	for values, want := range map[string]string{
		`{"colour":"red"}`: `unknown option "colour"`,
		`{"port":"abc"}`:   `option "port": expected int, got "abc"`,
		`{"debug":"yes"}`:  `option "debug": expected boolean, got "yes"`,
	} {
		var m map[string]string
		_ = json.Unmarshal([]byte(values), &m)
		if _, err := st.DeployConfig(ctx, uuid, ch.Url, m); !errors.Is(err, apierr.NotValid) || err.Error() != want {
			t.Errorf("deploy config %s: %v, want %s", values, err, want)
		}
	}
	cfg, err := st.DeployConfig(ctx, uuid, ch.Url, map[string]string{"port": "80", "title": "News", "ratio": "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"port": "80", "title": `"News"`, "ratio": "0.5"}; !reflect.DeepEqual(cfg, want) {
		t.Fatalf("stored form = %v", cfg)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "blog", CharmURL: ch.Url, Base: "ubuntu@22.04", Config: cfg}); err != nil {
		t.Fatal(err)
	}

	got, err := st.ApplicationConfig(ctx, uuid, "blog")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ name, typ, def, value, source string }
	var rows []row
	for _, s := range got.Settings {
		rows = append(rows, row{s.Option.Name, s.Option.Type, s.DefaultJSON, s.ValueJSON, s.Source})
	}
	want := []row{
		{"debug", "boolean", "false", "false", "default"},
		{"motd", "string", "", "", "default"},
		{"port", "int", "8080", "80", "user"},
		{"ratio", "float", "", "0.5", "user"},
		{"title", "string", `"My Blog"`, `"News"`, "user"},
	}
	if !reflect.DeepEqual(rows, want) || got.CharmURL != ch.Url || got.Settings[4].Option.Description != "Blog title." {
		t.Fatalf("config:\n got %v\nwant %v", rows, want)
	}
	agentJSON, err := agentConfig(ctx, st, uuid, "blog")
	if err != nil || agentJSON != `{"debug":false,"port":80,"ratio":0.5,"title":"News"}` {
		t.Fatalf("agent config %s %v", agentJSON, err)
	}

	// Set and reset; unchanged values write nothing.
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"debug": "true", "motd": ""}, []string{"port", "title"}); err != nil {
		t.Fatal(err)
	}
	app, _ := st.Application(ctx, uuid, "blog")
	if want := map[string]string{"debug": "true", "motd": `""`, "ratio": "0.5"}; !reflect.DeepEqual(app.Config, want) {
		t.Fatalf("config after set = %v", app.Config)
	}
	if agentJSON, _ = agentConfig(ctx, st, uuid, "blog"); agentJSON != `{"debug":true,"motd":"","port":8080,"ratio":0.5,"title":"My Blog"}` {
		t.Fatalf("agent config %s", agentJSON)
	}
	key := state.ModelPrefix(uuid) + "applications/blog"
	before, _ := st.Client().Get(ctx, key)
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"debug": "true"}, []string{"port"}); err != nil {
		t.Fatal(err)
	}
	after, _ := st.Client().Get(ctx, key)
	if before.Kvs[0].ModRevision != after.Kvs[0].ModRevision {
		t.Error("an unchanged config was written")
	}
	for _, tt := range []struct {
		values map[string]string
		reset  []string
		want   string
	}{
		{map[string]string{"nope": "1"}, nil, `unknown option "nope"`},
		{nil, []string{"nope"}, `unknown option "nope"`},
		{map[string]string{"port": "x"}, nil, `option "port": expected int, got "x"`},
		{map[string]string{"port": "1"}, []string{"port"}, `cannot set and reset key "port" simultaneously`},
	} {
		if err := st.SetApplicationConfig(ctx, uuid, "blog", tt.values, tt.reset); !errors.Is(err, apierr.NotValid) || err.Error() != tt.want {
			t.Errorf("set %v reset %v: %v, want %s", tt.values, tt.reset, err, tt.want)
		}
	}
	if err := st.SetApplicationConfig(ctx, uuid, "nope", map[string]string{"a": "b"}, nil); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown application: %v", err)
	}
}

// A charm without config.yaml has no options.
func TestCharmWithoutConfig(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, wordpressMeta))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeployConfig(ctx, uuid, ch.Url, map[string]string{"title": "x"}); err == nil || err.Error() != `unknown option "title"` {
		t.Fatalf("deploy config: %v", err)
	}
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	got, err := st.ApplicationConfig(ctx, uuid, "wordpress")
	if err != nil || len(got.Settings) != 0 {
		t.Fatalf("config %v %v", got, err)
	}
	if j, err := agentConfig(ctx, st, uuid, "wordpress"); err != nil || j != "{}" {
		t.Fatalf("agent config %s %v", j, err)
	}
}

// agentConfig is the config a unit agent of the application reads (config-get).
func agentConfig(ctx context.Context, st *state.State, uuid, app string) (string, error) {
	a, err := st.ReadAgentApplication(ctx, uuid, app)
	if err != nil {
		return "", err
	}
	return a.ConfigJSON, nil
}

// Trust is Juju's application config, apart from the charm's: deploy --trust, juju config
// trust=..., --reset trust; false (the default) has source "default" as in Juju.
func TestTrust(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "blog", CharmURL: ch.Url, Base: "ubuntu@22.04", Trust: true}); err != nil {
		t.Fatal(err)
	}
	trust := func() state.ConfigSetting {
		t.Helper()
		got, err := st.ApplicationConfig(ctx, uuid, "blog")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.ApplicationSettings) != 1 {
			t.Fatalf("application config = %+v", got.ApplicationSettings)
		}
		for _, s := range got.Settings {
			if s.Option.Name == "trust" {
				t.Fatal("trust among the charm's options")
			}
		}
		return got.ApplicationSettings[0]
	}
	s := trust()
	if s.Option.Name != "trust" || s.Option.Type != "bool" || s.Option.Description != "Does this application have access to trusted credentials" ||
		s.DefaultJSON != "false" || s.ValueJSON != "true" || s.Source != "user" {
		t.Fatalf("deployed with trust: %+v", s)
	}
	// Set with a charm option in one call, then reset.
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"trust": "false", "port": "81"}, nil); err != nil {
		t.Fatal(err)
	}
	app, _ := st.Application(ctx, uuid, "blog")
	if s := trust(); app.Trust || s.ValueJSON != "false" || s.Source != "default" || app.Config["port"] != "81" {
		t.Fatalf("after trust=false: %+v, config %v", s, app.Config)
	}
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"trust": "true"}, nil); err != nil {
		t.Fatal(err)
	}
	if s := trust(); s.ValueJSON != "true" || s.Source != "user" {
		t.Fatalf("after trust=true: %+v", s)
	}
	if err := st.SetApplicationConfig(ctx, uuid, "blog", nil, []string{"trust", "port"}); err != nil {
		t.Fatal(err)
	}
	app, _ = st.Application(ctx, uuid, "blog")
	if app.Trust || len(app.Config) != 0 {
		t.Fatalf("after reset: trust %v config %v", app.Trust, app.Config)
	}
	for _, tt := range []struct {
		values map[string]string
		reset  []string
		want   string
	}{
		{map[string]string{"trust": "maybe", "port": "82"}, nil, `option "trust": expected bool, got "maybe"`},
		{map[string]string{"trust": "true"}, []string{"trust"}, `cannot set and reset key "trust" simultaneously`},
	} {
		if err := st.SetApplicationConfig(ctx, uuid, "blog", tt.values, tt.reset); !errors.Is(err, apierr.NotValid) || err.Error() != tt.want {
			t.Errorf("set %v reset %v: %v, want %s", tt.values, tt.reset, err, tt.want)
		}
	}
	app, _ = st.Application(ctx, uuid, "blog")
	if app.Trust || len(app.Config) != 0 {
		t.Fatalf("a refused change was written: trust %v config %v", app.Trust, app.Config)
	}
}

// credential-get: the model's cloud for a trusted application, Juju's "permission denied"
// otherwise, following every change of trust; setting the trust an application already has
// writes nothing, so its units run no config-changed.
func TestTrustedCloudSpec(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZipWithConfig(t, wordpressMeta, blogConfig))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "blog", CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
		t.Fatal(err)
	}
	denied := func(when string) {
		t.Helper()
		if spec, err := st.TrustedCloudSpec(ctx, uuid, "blog"); !errors.Is(err, apierr.PermissionDenied) || err.Error() != "permission denied" {
			t.Fatalf("%s: %+v, %v", when, spec, err)
		}
	}
	denied("untrusted")
	key := state.ModelPrefix(uuid) + "applications/blog"
	rev := func() int64 {
		t.Helper()
		resp, err := st.Client().Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Kvs[0].ModRevision
	}
	before := rev()
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"trust": "false"}, nil); err != nil {
		t.Fatal(err)
	}
	if rev() != before {
		t.Error("an unchanged trust was written")
	}
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"trust": "true"}, nil); err != nil {
		t.Fatal(err)
	}
	spec, err := st.TrustedCloudSpec(ctx, uuid, "blog")
	if err != nil {
		t.Fatal(err)
	}
	want := state.CloudSpec{Type: "local", Name: "localhost", Region: "localhost", AuthType: "empty"}
	if !reflect.DeepEqual(*spec, want) {
		t.Fatalf("trusted: %+v, want %+v", *spec, want)
	}
	before = rev()
	if err := st.SetApplicationConfig(ctx, uuid, "blog", map[string]string{"trust": "true"}, nil); err != nil {
		t.Fatal(err)
	}
	if rev() != before {
		t.Error("an unchanged trust was written")
	}
	if err := st.SetApplicationConfig(ctx, uuid, "blog", nil, []string{"trust"}); err != nil {
		t.Fatal(err)
	}
	denied("after --reset trust")
	if _, err := st.TrustedCloudSpec(ctx, uuid, "nope"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unknown application: %v", err)
	}
}
